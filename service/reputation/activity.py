"""What an identity's runs say beside its reputation, so that a flaky agent reads differently from a clean
one with the same score: execution errors are left out of reputation (SPEC §6), so an agent with six
clean runs and six execution errors scores what a clean one does, and only these figures tell them apart.

Pure: it sums the per-day rows of sql/identity_activity.sql (the fleet's SQL sums the same per identity).
"""

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from service.reputation.model import reported


def activity(days: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Runs, execution errors and their share, unsafe verdicts, the last run's time and the top failure over
    the days given."""
    runs = sum(day["runs"] for day in days)
    errors = sum(day["execution_errors"] for day in days)
    primaries: Counter[str] = Counter()
    impacts: Counter[str] = Counter()
    for day in days:
        primaries.update(day["primary_failures"])
        impacts.update(day["primary_impacts"])
    return {
        "runs": runs,
        "execution_errors": errors,
        "execution_error_share": reported(errors / runs) if runs else None,
        "unsafe_runs": sum(day["unsafe_runs"] for day in days),
        "last_run_at": max((day["last_run_at"] for day in days), default=None),
        "top_failure": top_failure(primaries, impacts),
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
