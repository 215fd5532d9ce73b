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

It also repairs the runs whose ids a client pre-claimed before posted signals had an id space of their
own (issue #28): a signal stored under a run's emitted id made the store skip the run's own event. The
rows found under the ids a plan would write are occupants: the run's events go under free ids, and each
occupant that counts is retracted (service.reputation.rebuild).
"""

from collections import defaultdict
from dataclasses import dataclass
from uuid import UUID

from service.reputation.emit import events_for_run
from service.reputation.model import ReputationEvent
from service.reputation.rebuild import Occupant, Plan, plan
from service.services.runs import emission_view
from service.store import reputation as reputation_store
from service.store import runs as run_store
from service.store.client import Store
from service.store.records import RunRecord

PAGE_RUNS = 500
RunKey = tuple[str, str]  # (identity, run id)


@dataclass
class RebuildReport:
    """What a rebuild did for one tenant: the finalized runs it examined, those whose events changed,
    and the events retracted and emitted."""

    tenant: str
    runs_examined: int = 0
    runs_changed: int = 0
    events_retracted: int = 0
    events_emitted: int = 0

    def count(self, runs: list[RunRecord], changed: set[RunKey], written: list[ReputationEvent]) -> None:
        self.runs_examined += len(runs)
        self.runs_changed += len(changed)
        self.events_retracted += sum(1 for event in written if event.sign < 0)
        self.events_emitted += sum(1 for event in written if event.sign > 0)


def _key(run: RunRecord) -> RunKey:
    return run.identity, run.run_id


def _plans(store: Store, tenant: str, runs: list[RunRecord]) -> dict[RunKey, Plan]:
    """Each run's plan, free of occupants: the ids the plans would write are looked up (any source), and
    the rows found there are handed to the planner, which writes elsewhere and retracts them, until the
    plans' ids are all free. Each round finds at least one row more, and before issue #28 only a finite
    number of them could be posted, so the rounds end; with no occupant there is one lookup a page."""
    causes = run_store.causes_of(store, tenant, [run.run_id for run in runs])
    stored = reputation_store.run_events(store, tenant, [_key(run) for run in runs])
    emitted = {_key(run): events_for_run(emission_view(run, causes.get(run.run_id, []))) for run in runs}
    occupants: defaultdict[RunKey, list[Occupant]] = defaultdict(list)
    while True:
        plans = {key: plan(stored.get(key, []), emitted[key], occupants[key]) for key in emitted}
        owners: dict[tuple[str, UUID], RunKey] = {(key[0], i): key for key, done in plans.items() for i in done.ids}
        found = reputation_store.events_under(store, tenant, owners) if owners else []
        if not found:
            return plans
        for occupant in found:
            occupants[owners[(occupant.event.identity, occupant.event.event_id)]].append(occupant)


def _write(store: Store, tenant: str, plans: dict[RunKey, Plan]) -> tuple[set[RunKey], list[ReputationEvent]]:
    """Writes the plans: first each occupant's retraction with the occupant's source, then the runs' own
    rows in one insert, so that a rebuild cut short in between still finds the runs out of date, and so
    their occupants, when run again. Returns the runs changed and the rows written."""
    by_source: defaultdict[str, list[ReputationEvent]] = defaultdict(list)
    for done in plans.values():
        for eviction in done.evictions:
            by_source[eviction.source].append(eviction.event)
    written: list[ReputationEvent] = []
    for source, rows in sorted(by_source.items()):
        written += reputation_store.insert_events(store, tenant, rows, source)
    written += reputation_store.insert_events(store, tenant, [row for done in plans.values() for row in done.rows])
    ids = {event.event_id for event in written}
    return {key for key, done in plans.items() if done.ids & ids}, written


def rebuild(store: Store, tenant: str, page_runs: int = PAGE_RUNS) -> RebuildReport:
    """Re-emits the tenant's finalized runs' reputation events under the current model; never touches
    another tenant's."""
    report = RebuildReport(tenant)
    after = ""
    while True:
        page = run_store.runs_after(store, tenant, after, page_runs)
        finalized = [run for run in page if run.finalized]
        if finalized:
            report.count(finalized, *_write(store, tenant, _plans(store, tenant, finalized)))
        if len(page) < page_runs:
            return report
        after = page[-1].run_id
