"""Suite summaries (SPEC §6) from the stored runs of a suite."""

from service.outcome import RunOutcome, SuiteSummary, summarize_suite
from service.store import runs as run_store
from service.store.client import Store


def suite_summary(store: Store, tenant: str, suite: str) -> SuiteSummary | None:
    """None when the tenant has no finalized run in the suite."""
    rows = run_store.suite_runs(store, tenant, suite)
    if not rows:
        return None
    records = [
        RunOutcome(
            run_id=row["run_id"],
            suite=suite,
            task_id=row["task_id"] or None,
            trial=row["trial"],
            status=row["execution_status"],
            score=row["score"],
            stage=row["failure_stage"] or None,
            reason_code=row["failure_reason_code"] or None,
        )
        for row in rows
    ]
    return summarize_suite(suite, records)
