"""Suite summaries (SPEC §6) from the stored runs of a suite."""

from service.outcome import ExecutionStatus, RunOutcome, SuiteSummary, summarize_suite
from service.store import runs as run_store
from service.store.client import Store


def suite_summary(store: Store, tenant: str, suite: str) -> SuiteSummary | None:
    """None when the tenant has no finalized run in the suite."""
    runs = run_store.suite_runs(store, tenant, suite)
    if not runs:
        return None
    outcomes = [
        RunOutcome(
            run_id=run.run_id,
            suite=suite,
            task_id=run.task_id or None,
            trial=run.trial,
            status=ExecutionStatus(run.execution_status),
            score=run.score,
            stage=run.failure_stage or None,
            reason_code=run.failure_reason_code or None,
        )
        for run in runs
    ]
    return summarize_suite(suite, outcomes)
