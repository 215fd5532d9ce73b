"""What an identity's runs say beside its reputation, so that a flaky agent reads differently from a clean
one with the same score: execution errors are left out of reputation (SPEC §6), so an agent with six
clean runs and six execution errors scores what a clean one does, and only these figures tell them apart.

Pure: it sums the per-day rows of sql/identity_activity.sql (the fleet's SQL sums the same per identity).
"""

from collections.abc import Mapping, Sequence
from typing import Any

from service.reputation.model import reported


def activity(days: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Runs, execution errors and their share, unsafe verdicts and the last run's time over the days given."""
    runs = sum(day["runs"] for day in days)
    errors = sum(day["execution_errors"] for day in days)
    return {
        "runs": runs,
        "execution_errors": errors,
        "execution_error_share": reported(errors / runs) if runs else None,
        "unsafe_runs": sum(day["unsafe_runs"] for day in days),
        "last_run_at": max((day["last_run_at"] for day in days), default=None),
    }


def top_failure(failures: Mapping[str, int]) -> str | None:
    """The failure type seen most often (ties: the first by name); None without failures."""
    return min(failures, key=lambda failure: (-failures[failure], failure), default=None)


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
