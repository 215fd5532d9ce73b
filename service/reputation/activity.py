"""What an identity's runs say beside its reputation, so that a flaky agent reads differently from a clean
one with the same score: execution errors are left out of reputation (SPEC §6), so an agent with six
clean runs and six execution errors scores what a clean one does, and only these figures tell them apart.

Pure: it reads the sums of sql/identity_activity.sql or of the fleet table's row (whose refresh sums the same
per identity), and the days of sql/identity_days.sql.
"""

from collections.abc import Mapping, Sequence
from typing import Any

from service.reputation.model import reported

_NO_RUNS: dict[str, Any] = {
    "runs": 0,
    "execution_errors": 0,
    "execution_error_share": None,
    "unsafe_runs": 0,
    "last_run_at": None,
    "top_failure": None,
}


def activity(window: Mapping[str, Any] | None) -> dict[str, Any]:
    """Runs, execution errors and their share, unsafe verdicts, the last run's time and the top failure, from
    the sums of a window's runs (sql/identity_activity.sql, or the fleet table's row); None: no run."""
    if window is None:
        return dict(_NO_RUNS)
    runs, errors = window["runs"], window["execution_errors"]
    return {
        "runs": runs,
        "execution_errors": errors,
        "execution_error_share": reported(errors / runs) if runs else None,
        "unsafe_runs": window["unsafe_runs"],
        "last_run_at": window["last_run_at"],
        "top_failure": top_failure(window["primary_failures"], window["primary_impacts"]),
    }


def top_failure(primaries: Mapping[str, int], impacts: Mapping[str, int]) -> str | None:
    """The failure type that is the primary failure of most runs (`primaries`: runs per type); ties go to
    the larger summed impact of those runs' primary causes (`impacts`, negative: the more negative, the more
    damage done), then to the first name. None when no run failed. Counting every cause instead would let a
    failure that rides along in many runs, never the one that decided their verdict, stand for the agent."""
    return min(primaries, key=lambda failure: (-primaries[failure], impacts.get(failure, 0), failure), default=None)


def daily(days: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The days with runs, as a sparkline draws them: runs, execution errors, unsafe verdicts and the quality
    runs' mean trust."""
    return [
        {
            "day": day["day"],
            "runs": day["runs"],
            "execution_errors": day["execution_errors"],
            "unsafe_runs": day["unsafe_runs"],
            "mean_trust": reported(day["mean_trust"]),
        }
        for day in days
    ]
