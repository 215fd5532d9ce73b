"""`repute reputation rebuild` (POST /v1/reputation/rebuild): re-emits the reputation events of one
tenant's finalized runs under the current model (SPEC §7), for data emitted by a version whose model
differed (before 2026-11-23 run_trust was (trust - 50) / 50, also for a run without events).

Nothing stored is rewritten: what the model no longer emits is retracted and what it emits now is added
(service.reputation.rebuild, migrations/0010), so the scores become what a fresh finalize of the same
runs would give. The runs are read in pages of PAGE_RUNS in run id order, each emitted again from its
stored record (verdict, trust, event count, execution outcome, session composite) and causes
(run_failures) exactly as the finalize does (service.services.finalize.emission_view), compared with the
events stored for it, and each page's rows written in one insert through the store's idempotent path
(a known id is skipped, tenant-scoped deduplication token). Idempotent: a second rebuild finds every run
up to date and writes nothing; one cut short converges when run again. A run being finalized meanwhile
is either still open (skipped: its finalize emits the current model) or stored with its events.

With `rediagnose` (`--rediagnose`, SPEC §4.1) each run is first diagnosed again from its stored events
under the profile now in force for it (its own, else the tenant's rules, else its input kind's default),
as its finalize would judge it today. A run whose diagnosis changes gets a new version (diagnosis, trust,
readiness, outcome classified again, causes), and its reputation events follow through the retractions
above. In the finalize's order: its causes (run_failures) are replaced and its figures by identity and day
(identity_run_days) replaced by the new version's, its reputation events brought up to date, and its row
written last, so a rebuild cut short finds the run's old row, diagnoses it again and converges. A run
whose events are no longer stored (their TTL has passed: fewer than the run held) is left
as it is and counted in `runs_without_events`.

It also repairs the runs whose ids a client pre-claimed before posted signals had an id space of their
own (issue #28): a signal stored under a run's emitted id made the store skip the run's own event. The
rows found under the ids a plan would write are occupants: the run's events go under free ids, and each
occupant that counts is retracted (service.reputation.rebuild).
"""

from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from service.diagnosis import Diagnosis, diagnose
from service.model import RunRecord, RunView, next_version
from service.outcome import classify_execution
from service.profiles import TenantProfiles
from service.reputation.emit import events_for_run
from service.reputation.model import ReputationEvent
from service.reputation.rebuild import Occupant, Plan, plan
from service.services import profiles as profile_service
from service.services.finalize import cause_triples, emission_view, failure_rows, outcome_fields, verdict_fields
from service.store import reputation as reputation_store
from service.store import runs as run_store
from service.store import writer
from service.store.client import Store
from service.vocab import INPUT_OF_KIND, ExecutionStatus

PAGE_RUNS = 500
EVENTS_PER_READ = 100_000  # a re-diagnosis reads the events of a page's runs this many at a time, at most

Causes = dict[str, list[tuple[str, str, int]]]
RunKey = tuple[str, str]  # (identity, run id)


@dataclass(frozen=True)
class Rediagnosis:
    """What a rebuild re-diagnoses with: the tenant's profiles now in force, the pass threshold of SPEC §6,
    and the time of the new run versions."""

    profiles: TenantProfiles
    pass_threshold: float
    now: datetime


@dataclass(frozen=True)
class Rediagnosed:
    """A run's new version, and its diagnosis."""

    record: RunRecord
    diagnosis: Diagnosis


@dataclass
class RebuildReport:
    """What a rebuild did for one tenant: the finalized runs it examined, those whose events changed,
    and the events retracted and emitted; with a re-diagnosis, the runs whose diagnosis changed and those
    left as they were because their events are no longer stored."""

    tenant: str
    runs_examined: int = 0
    runs_changed: int = 0
    events_retracted: int = 0
    events_emitted: int = 0
    runs_rediagnosed: int = 0
    runs_without_events: int = 0

    def count(self, runs: Sequence[RunView], changed: set[RunKey], written: list[ReputationEvent]) -> None:
        self.runs_examined += len(runs)
        self.runs_changed += len(changed)
        self.events_retracted += sum(1 for event in written if event.sign < 0)
        self.events_emitted += sum(1 for event in written if event.sign > 0)


def rediagnosis(store: Store, tenant: str, pass_threshold: float, now: datetime) -> Rediagnosis:
    return Rediagnosis(profile_service.current(store, tenant), pass_threshold, now)


def _key(run: RunView) -> RunKey:
    return run.identity, run.run_id


def _plans(store: Store, tenant: str, runs: Sequence[RunView], causes: Causes) -> dict[RunKey, Plan]:
    """Each run's plan, free of occupants: the ids the plans would write are looked up (any source), and
    the rows found there are handed to the planner, which writes elsewhere and retracts them, until the
    plans' ids are all free. Each round finds at least one row more, and before issue #28 only a finite
    number of them could be posted, so the rounds end; with no occupant there is one lookup a page."""
    stored = reputation_store.run_events(store, tenant, [_key(run) for run in runs])
    emitted = {_key(run): events_for_run(emission_view(tenant, run, causes.get(run.run_id, []))) for run in runs}
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


def _rediagnosed(run: RunRecord, events: list[dict[str, Any]], how: Rediagnosis) -> Rediagnosed | None:
    """The run's new version under the profile in force for it, or None when its diagnosis stays the same."""
    profile = how.profiles.resolve(run.identity, INPUT_OF_KIND[run.kind], run.profile)
    diagnosis = diagnose(events, profile)
    if diagnosis.diagnosis_hash == run.diagnosis_hash:
        return None
    changes = verdict_fields(diagnosis)
    if run.execution_status != ExecutionStatus.EXECUTION_ERROR:  # an execution error's outcome is not the verdict's
        execution = None if run.caller_score is None else {"score": run.caller_score}
        outcome = classify_execution(
            execution, [], changes["trust_score"], how.pass_threshold, readiness=changes["readiness"]
        )
        changes |= outcome_fields(execution, outcome)
    return Rediagnosed(run.with_version(next_version(how.now), **changes), diagnosis)


def _by_events(runs: Sequence[RunRecord]) -> Iterator[list[RunRecord]]:
    """The runs in groups holding at most EVENTS_PER_READ events (a larger run alone)."""
    group: list[RunRecord] = []
    events = 0
    for run in runs:
        if group and events + run.event_count > EVENTS_PER_READ:
            yield group
            group, events = [], 0
        group.append(run)
        events += run.event_count
    if group:
        yield group


def _rediagnose_page(
    store: Store, tenant: str, page: Sequence[RunView], how: Rediagnosis, report: RebuildReport
) -> tuple[list[RunRecord], list[RunRecord], Causes]:
    """Diagnoses a page's finalized runs again: (the page's runs as they now stand, the new versions to
    write once their events are up to date, the new versions' causes). Their causes are replaced here."""
    stored = run_store.get_runs(store, tenant, [run.run_id for run in page])
    current: list[RunRecord] = []
    changed: list[Rediagnosed] = []
    for group in _by_events([stored[run.run_id] for run in page]):
        events = run_store.event_payloads(store, tenant, [run.run_id for run in group])
        for run in group:
            found = events.get(run.run_id, [])
            expired = len(found) < run.event_count
            new = None if expired else _rediagnosed(run, found, how)
            report.runs_without_events += expired
            current.append(run if new is None else new.record)
            changed += [new] if new is not None else []
    if changed:
        causes = {new.record.run_id: failure_rows(new.record, new.diagnosis) for new in changed}
        run_store.replace_failures(store, tenant, list(causes), [row for rows in causes.values() for row in rows])
        writer.run_days(store, [run_store.day_row(new.record, causes[new.record.run_id]) for new in changed])
    report.runs_rediagnosed += len(changed)
    return (
        current,
        [new.record for new in changed],
        {new.record.run_id: cause_triples(new.diagnosis) for new in changed},
    )


def rebuild(
    store: Store, tenant: str, page_runs: int = PAGE_RUNS, rediagnose: Rediagnosis | None = None
) -> RebuildReport:
    """Re-emits the tenant's finalized runs' reputation events under the current model, after diagnosing
    them again under the profiles in force when `rediagnose` says how; never touches another tenant's."""
    report = RebuildReport(tenant)
    after = ""
    while True:
        page = run_store.runs_after(store, tenant, after, page_runs)
        finalized: Sequence[RunView] = [run for run in page if run.finalized]
        if finalized:
            changed: list[RunRecord] = []
            causes = run_store.causes_of(store, tenant, [run.run_id for run in finalized])
            if rediagnose is not None:
                finalized, changed, fresh = _rediagnose_page(store, tenant, finalized, rediagnose, report)
                causes |= fresh
            report.count(finalized, *_write(store, tenant, _plans(store, tenant, finalized, causes)))
            writer.runs(store, changed)
        if len(page) < page_runs:
            return report
        after = page[-1].run_id
