"""Runs posted whole (POST /v1/sessions and its batch, `repute ingest`): parsed and validated once into the
run model, then judged at once by the finalize (service/services/finalize.py).

A whole run posted again under a run_id already finalized (a retry, `repute ingest` run twice) answers the
stored result when it is the same run, and is a conflict naming what differs when it is not: a run_id names
one run, and silently keeping the first of two different runs would hide a harness bug. Identity, suite,
task id, trial, metadata, the profile and the parent the run names are compared with the stored record.
The events are compared by `content_hash` (service.model), a sha256 of the events as canonical JSON that
the finalize stores on the run: no read of its events back when it is posted again, and it still holds
after the events' TTL has dropped them. Runs finalized before the column existed (migration 0008) have no
hash, and their events are not compared. The `execution` object is not compared: the stored outcome stands.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from functools import partial

from service.diagnosis import parse_run, parse_runs
from service.errors import ClientError, Conflict, FieldError
from service.model import RunMaterial, RunRecord
from service.model.header import COMPARED
from service.services import profiles as profile_service
from service.services.assembly import Finalizing, canonical_text, new_record
from service.services.finalize import finalize_batch
from service.services.inputs import materials_of, new_run_id
from service.services.locks import holding
from service.settings import Settings
from service.store import runs as run_store
from service.store import traces as trace_store
from service.store.client import Store
from service.store.rows import to_millis
from service.vocab import RunStatus


@dataclass(frozen=True)
class Ingested:
    record: RunRecord
    created: bool


def ingest_batch(store: Store, tenant: str, body: bytes, settings: Settings, now: datetime) -> list[Ingested]:
    """POST /v1/sessions/batch: the body's runs parsed, checked and ingested, all or nothing."""
    materials = materials_of(parse_runs(body), settings)
    return ingest_sessions(store, tenant, materials, now, settings.quality_pass_threshold)


def ingest_posted(
    store: Store, tenant: str, bodies: Sequence[bytes], settings: Settings, now: datetime
) -> list[Ingested | ClientError]:
    """POST /v1/sessions requests of one tenant written together: each body parsed and checked on its own
    (one that is refused fails alone), the others ingested as one batch (`ingest_each`)."""
    parsed: list[RunMaterial | ClientError] = []
    for body in bodies:
        try:
            parsed.extend(materials_of([parse_run(body)], settings))
        except ClientError as refused:
            parsed.append(refused)
    valid = [item for item in parsed if isinstance(item, RunMaterial)]
    stored = iter(ingest_each(store, tenant, valid, now, settings.quality_pass_threshold) if valid else ())
    return [item if isinstance(item, ClientError) else next(stored) for item in parsed]


def ingest_sessions(
    store: Store, tenant: str, runs: Sequence[RunMaterial], now: datetime, pass_threshold: float
) -> list[Ingested]:
    """Stores and finalizes a batch of whole runs, all or nothing: a run refused refuses the batch (its
    error names the run: `sessions[2].profile`). A run id already finalized returns the stored run untouched
    when the run sent is the same, and is a conflict when it differs; one that is open (being streamed
    through /v1/runs) is a conflict; a batch naming one run id twice is a conflict."""
    run_ids = [run.header.run_id or new_run_id() for run in runs]
    if len(set(run_ids)) != len(run_ids):
        raise Conflict("a batch names the same run_id twice")
    outcomes = _ingest(store, tenant, run_ids, runs, now, pass_threshold, lambda i: _prefix(i, runs), True)
    return [outcome for outcome in outcomes if isinstance(outcome, Ingested)]  # whole: none is refused


def ingest_each(
    store: Store, tenant: str, runs: Sequence[RunMaterial], now: datetime, pass_threshold: float
) -> list[Ingested | ClientError]:
    """Whole runs of separate requests of one tenant, written together (the write pool groups the single
    runs queued meanwhile): each is answered as if it had come alone, in the order they came, and a run
    refused fails alone. A run id sent twice is the first's run, as a repeat of a stored run is."""
    run_ids = [run.header.run_id or new_run_id() for run in runs]
    return _ingest(store, tenant, run_ids, runs, now, pass_threshold, lambda _: "", False)


def _ingest(
    store: Store,
    tenant: str,
    run_ids: list[str],
    runs: Sequence[RunMaterial],
    now: datetime,
    pass_threshold: float,
    prefix: Callable[[int], str],
    whole: bool,
) -> list[Ingested | ClientError]:
    """Decides each run before anything is written: refused, a repeat of a stored run or of an earlier one
    of the same request (its answer is that run's; a different run under the same id is a conflict), or
    new. Then finalizes the new ones in one batch. With `whole`, a run refused refuses them all (its error
    is raised) and nothing is written."""
    now = to_millis(now)
    distinct = sorted(set(run_ids))
    with holding(tenant, distinct):
        # Two narrow reads side by side: which runs exist, which ids trace-born runs hold.
        held = store.beside(partial(trace_store.trace_held, store, tenant, distinct))
        states = run_store.run_states(store, tenant, distinct)
        refused = _refusals(store, tenant, run_ids, runs, prefix, states, held.result() - set(states))
        stored = run_store.get_runs(store, tenant, sorted(states)) if states else {}  # whole, to compare
        first: dict[str, int] = {}
        for index, run_id in enumerate(run_ids):
            if index in refused:
                continue
            repeated = stored.get(run_id) or _unwritten(tenant, run_id, runs, first, now)
            if repeated is None:
                first[run_id] = index
            elif conflict := _difference(repeated, runs[index], prefix(index)):
                refused[index] = conflict
        if whole and refused:
            raise refused[min(refused)]
        items = [
            Finalizing(new_record(tenant, runs[index].header, run_id, now), runs[index])
            for run_id, index in first.items()
        ]
        stored.update((record.run_id, record) for record in finalize_batch(store, tenant, items, now, pass_threshold))
        return [
            refused.get(index) or Ingested(stored[run_id], first.get(run_id) == index)
            for index, run_id in enumerate(run_ids)
        ]


def _unwritten(
    tenant: str, run_id: str, runs: Sequence[RunMaterial], first: dict[str, int], now: datetime
) -> RunRecord | None:
    """The run an earlier run of the request will be under this id, as far as a repeat is compared."""
    if run_id not in first:
        return None
    run = runs[first[run_id]]
    return replace(new_record(tenant, run.header, run_id, now), content_hash=run.content_hash)


def _refusals(
    store: Store,
    tenant: str,
    run_ids: list[str],
    runs: Sequence[RunMaterial],
    prefix: Callable[[int], str],
    states: dict[str, str],
    held: set[str],
) -> dict[int, ClientError]:
    """The runs refused before anything is written, by index: a profile or a parent that names nothing of
    the tenant's, a run that is open (being streamed through /v1/runs; `states` are the stored runs'), or one
    whose id a trace-born run not stored yet holds (`held`)."""
    refused: dict[int, ClientError] = {}
    for index, run in enumerate(runs):
        if run.header.profile:
            try:
                profile_service.require_known(store, tenant, [(run.header.profile, f"{prefix(index)}profile")])
            except ClientError as error:
                refused[index] = error
    missing = _unknown_parents(store, tenant, [run.header.parent_run_id for run in runs], set(run_ids))
    parents = dict(zip(run_ids, (run.header.parent_run_id for run in runs), strict=True))
    for index, (run_id, run) in enumerate(zip(run_ids, runs, strict=True)):
        if index in refused:
            continue
        field = f"{prefix(index)}parent_run_id"
        if run.header.parent_run_id in missing:
            refused[index] = FieldError(
                field, f"parent_run_id {run.header.parent_run_id!r} names no run of this tenant"
            )
        elif cycle := parent_cycle(run_id, parents):
            refused[index] = FieldError(field, f"parent_run_id makes a cycle: {' → '.join(cycle)}")
        elif states.get(run_id, RunStatus.FINALIZED) != RunStatus.FINALIZED:
            refused[index] = Conflict(f"run {run_id} is open; append its events and finalize it instead")
        elif run_id in held:
            refused[index] = trace_holds(run_id)
    return refused


def parent_cycle(run_id: str, parents: dict[str, str]) -> list[str]:
    """The run ids from `run_id` up its parents (`parents`: the runs of one request, each to the parent it
    names) back to `run_id`, when they come back to it (a run its own parent, or part of a cycle); else
    []. A stored run cannot be part of a new cycle: its parent is its own, and it names none of the new.
    A cycle through `run_id` is back to it within as many steps as the request has runs: the walk stops
    there, so one that never comes back (into another cycle) ends too."""
    chain = [run_id]
    for _ in parents:
        parent = parents.get(chain[-1], "")
        if not parent:
            return []
        chain.append(parent)
        if parent == run_id:
            return chain
    return []


def trace_holds(run_id: str) -> Conflict:
    return Conflict(
        f"run {run_id} is a trace-born run whose spans are stored and that is not finalized yet; post this run"
        " under another run_id"
    )


def _unknown_parents(store: Store, tenant: str, parents: Sequence[str], sent: set[str]) -> set[str]:
    """The parent run ids that name no run of this tenant: neither stored nor sent in the same request
    (SPEC §3.5). Another tenant's run is as unknown as a run that does not exist."""
    wanted = sorted({parent for parent in parents if parent and parent not in sent})
    stored = run_store.run_states(store, tenant, wanted) if wanted else {}
    return {parent for parent in wanted if parent not in stored}


def require_parents(store: Store, tenant: str, named: Sequence[tuple[str, str]], sent: set[str]) -> None:
    """Each (parent run id, field) names a run of this tenant; else a 422 naming the field."""
    missing = _unknown_parents(store, tenant, [parent for parent, _ in named], sent)
    for parent, field in named:
        if parent in missing:
            raise FieldError(field, f"parent_run_id {parent!r} names no run of this tenant")


def _prefix(index: int, runs: Sequence[RunMaterial]) -> str:
    """Where a run's fields are named in a batch's errors: `sessions[2].` when there are several."""
    return f"sessions[{index}]." if len(runs) > 1 else ""


def _difference(stored: RunRecord, run: RunMaterial, prefix: str) -> Conflict | None:
    """A run posted again must be the stored one; a conflict names each field that differs."""
    sent = {name: getattr(run.header, name) for name in COMPARED}
    sent["metadata"] = canonical_text(sent["metadata"])
    differ = [name for name, value in sent.items() if getattr(stored, name) != value]
    if stored.content_hash and stored.content_hash != run.content_hash:
        differ.append("events")
    if not differ:
        return None
    return Conflict(
        f"run {stored.run_id} already exists with a different {', '.join(differ)}: a run_id names one run",
        field=prefix + differ[0],
    )
