"""`repute reputation rebuild` (POST /v1/reputation/rebuild): re-emits the reputation events of one
tenant's finalized runs under the current model (SPEC §7), for data emitted by a version whose model
differed (before 2026-11-23 run_trust was (trust - 50) / 50, also for a run without events).

Nothing stored is rewritten: what the model no longer emits is retracted and what it emits now is added
(service.reputation.rebuild, migrations/0010), so the scores become what a fresh finalize of the same
runs would give. The runs are read in pages of PAGE_RUNS in run id order, each emitted again from its
stored record (verdict, trust, event count, execution outcome, session composite) and causes
(run_failures) exactly as the finalize does (service.services.runs.emission_view), compared with the
events stored for it, and each page's rows written in one insert through the store's idempotent path
(a known id is skipped, tenant-scoped deduplication token). Idempotent: a second rebuild finds every run
up to date and writes nothing; one cut short converges when run again. A run being finalized meanwhile
is either still open (skipped: its finalize emits the current model) or stored with its events.
"""

from dataclasses import dataclass

from service.reputation.emit import events_for_run
from service.reputation.model import ReputationEvent
from service.reputation.rebuild import plan
from service.services.runs import emission_view
from service.store import reputation as reputation_store
from service.store import runs as run_store
from service.store.client import Store
from service.store.records import RunRecord

PAGE_RUNS = 500


@dataclass
class RebuildReport:
    """What a rebuild did for one tenant: the finalized runs it examined, those whose events changed,
    and the events retracted and emitted."""

    tenant: str
    runs_examined: int = 0
    runs_changed: int = 0
    events_retracted: int = 0
    events_emitted: int = 0

    def count(self, runs: list[RunRecord], written: tuple[ReputationEvent, ...]) -> None:
        self.runs_examined += len(runs)
        self.runs_changed += len({event.reference_id for event in written})
        self.events_retracted += sum(1 for event in written if event.sign < 0)
        self.events_emitted += sum(1 for event in written if event.sign > 0)


def _rebuild_page(store: Store, tenant: str, runs: list[RunRecord]) -> tuple[ReputationEvent, ...]:
    """Brings the events of some finalized runs up to date; returns the rows written."""
    causes = run_store.causes_of(store, tenant, [run.run_id for run in runs])
    stored = reputation_store.run_events(store, tenant, [(run.identity, run.run_id) for run in runs])
    rows = [
        row
        for run in runs
        for row in plan(
            stored.get((run.identity, run.run_id), []),
            events_for_run(emission_view(run, causes.get(run.run_id, []))),
        ).rows
    ]
    return reputation_store.insert_events(store, tenant, rows)


def rebuild(store: Store, tenant: str, page_runs: int = PAGE_RUNS) -> RebuildReport:
    """Re-emits the tenant's finalized runs' reputation events under the current model; never touches
    another tenant's."""
    report = RebuildReport(tenant)
    after = ""
    while True:
        page = run_store.runs_after(store, tenant, after, page_runs)
        finalized = [run for run in page if run.finalized]
        if finalized:
            report.count(finalized, _rebuild_page(store, tenant, finalized))
        if len(page) < page_runs:
            return report
        after = page[-1].run_id
