"""A run's material assembled from what is stored of it, when it is finalized after its evidence arrived
(SPEC §3.1 streamed events, §3.2 a log session's records, §3.4 and §3.5 a trace's spans): one loader per
kind of run, each converting its evidence once into `RunMaterial` (service.model), so the finalize that
follows is the same for all (service/services/finalize.py).
"""

from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, NamedTuple

import orjson

from service.diagnosis import normalize_events
from service.errors import NotFound
from service.ids import MAX_ID_CHARS
from service.judge import SessionAccumulator, to_run_events
from service.judge.records import decode_record
from service.model import RunHeader, RunMaterial, RunRecord, next_version
from service.priority import stepping
from service.services.inputs import trace_header
from service.store import runs as run_store
from service.store import sessions as session_store
from service.store import traces as trace_store
from service.store.client import Store
from service.store.rows import from_epoch_ms, to_millis
from service.store.traces import StoredTrace
from service.traces import decode_span
from service.traces.agents import map_runs
from service.traces.mapping import TraceRun
from service.vocab import RunKind

CHILD_SUFFIXES = 100  # the ids tried at once for a child whose own id another run took


class Finalizing(NamedTuple):
    """A run to finalize: its open version (stored, or made for it now) and what it is judged from.
    `stores_events`: whether its events are written with it (a streamed run's were, as they came)."""

    base: RunRecord
    material: RunMaterial
    stores_events: bool = True


def canonical_text(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def new_record(tenant: str, header: RunHeader, run_id: str, now: datetime) -> RunRecord:
    """The open version of a new run."""
    now = to_millis(now)
    return RunRecord(
        tenant=tenant,
        run_id=run_id,
        identity=header.identity,
        kind=header.kind,
        suite=header.suite,
        task_id=header.task_id,
        trial=header.trial,
        metadata=canonical_text(header.metadata),
        profile=header.profile,
        parent_run_id=header.parent_run_id,
        created_at=now,
        run_at=now,
        version=next_version(now),
    )


def header_of(record: RunRecord) -> RunHeader:
    """A stored run's own fields."""
    return RunHeader(
        identity=record.identity,
        run_id=record.run_id,
        suite=record.suite,
        task_id=record.task_id,
        trial=record.trial,
        metadata=orjson.loads(record.metadata or "{}"),
        kind=record.kind,
        profile=record.profile,
        parent_run_id=record.parent_run_id,
    )


Loader = Callable[[Store, str, str, RunRecord | None, dict[str, Any] | None, datetime], list[Finalizing]]


def material_of(
    store: Store,
    tenant: str,
    run_id: str,
    run: RunRecord | None,
    execution: dict[str, Any] | None,
    now: datetime,
    traces: Sequence[StoredTrace] | None = None,
) -> list[Finalizing]:
    """What finalizing the run (not finalized yet) takes, by its kind's loader, the run itself first. A run
    with no row is trace-born (its spans make it at its finalize). The caller's `execution` is the run's.
    `traces`: a trace-born run's stored traces when the caller read them under the run's lock (the settle
    check); else they are read here."""
    kind = RunKind.TRACE if run is None else run.kind
    if kind == RunKind.TRACE and traces is not None:
        return _trace(store, tenant, run_id, run, execution, now, traces)
    return _LOADERS[kind](store, tenant, run_id, run, execution, now)


def _streamed(
    store: Store, tenant: str, run_id: str, run: RunRecord | None, execution: dict[str, Any] | None, now: datetime
) -> list[Finalizing]:
    """A run opened and fed through /v1/runs: its events as they were stored, read back, not normalized
    or serialized again."""
    assert run is not None
    events, payloads = run_store.stored_events(store, tenant, run_id)
    material = RunMaterial(header_of(run), events, execution, stored_payloads=payloads)
    return [Finalizing(run, material, stores_events=False)]


def _session(
    store: Store, tenant: str, run_id: str, run: RunRecord | None, execution: dict[str, Any] | None, now: datetime
) -> list[Finalizing]:
    """An OTLP log session: its records mapped to run events (SPEC §3.2, stored with it so /events shows
    them) and scored (SPEC §5)."""
    assert run is not None
    records = [decode_record(payload) for payload in session_store.load_payloads(store, tenant, run_id)]
    accumulator = SessionAccumulator(run_id)
    for record in records:
        accumulator.add(record)
    performance = accumulator.score(masque=run.identity).to_dict()
    events = normalize_events(to_run_events(records))
    return [Finalizing(run, RunMaterial(header_of(run), events, execution, performance))]


def _trace(
    store: Store,
    tenant: str,
    run_id: str,
    run: RunRecord | None,
    execution: dict[str, Any] | None,
    now: datetime,
    traces: Sequence[StoredTrace] | None = None,
) -> list[Finalizing]:
    """A trace-born run from all of its stored spans (SPEC §3.4), and a child run for each other agent in it
    (SPEC §3.5), the run first: their names, their events (stored with their span ids, so /events shows
    them), the times their spans cover and the execution error they show. A child whose id another run took
    already takes the first free of `<id>+2`, `<id>+3`, ... (`free_child_ids`): the run that took it is left
    as it is, and the agent's run is not lost. `traces`: the run's stored traces, read here unless given;
    none raises NotFound."""
    if traces is None:
        traces = trace_store.traces_of_runs(store, tenant, [run_id])
    if not traces:
        raise NotFound(f"run {run_id!r}")
    payloads = trace_store.load_payloads(store, tenant, [trace.trace_id for trace in traces])
    parent, *children = map_runs(run_id, [decode_span(payload) for payload in stepping(payloads)])
    items = []
    for mapped in [parent, *free_child_ids(store, tenant, children)]:
        header = trace_header(mapped)
        base = run if mapped is parent and run is not None else new_record(tenant, header, mapped.run_id, now)
        named = replace(  # a run opened through /v1/runs before its spans came keeps what they do not name
            base,
            identity=header.identity if mapped.identity else base.identity,
            suite=header.suite or base.suite,
            task_id=header.task_id or base.task_id,
            trial=base.trial if header.trial is None else header.trial,
        )
        material = RunMaterial(
            header_of(named),
            normalize_events(mapped.events),
            (execution if mapped is parent else None) or mapped.execution,
            started_at=_from_nanos(mapped.started_unix_nano),
            ended_at=_from_nanos(mapped.ended_unix_nano),
        )
        items.append(Finalizing(named, material))
    return items


def free_child_ids(store: Store, tenant: str, children: list[TraceRun]) -> list[TraceRun]:
    """The child runs, each under its own id unless another run has it (a run posted under `<trace>:<agent>`
    before the trace was finalized): then under the first of `<id>+2`, `<id>+3`, ... that no run has and
    no other child of the trace is under."""
    if not children:
        return []
    taken = set(run_store.run_states(store, tenant, [child.run_id for child in children]))
    if not taken:
        return children
    claimed = {child.run_id for child in children}
    placed = []
    for child in children:
        if child.run_id in taken:
            child = replace(child, run_id=_free_id(store, tenant, child.run_id, claimed))
            claimed.add(child.run_id)
        placed.append(child)
    return placed


def _free_id(store: Store, tenant: str, run_id: str, claimed: set[str]) -> str:
    """The first `<run_id>+N`, N from 2 on, that no run has and no other child claimed (cut so each stays a
    run id of 256 characters at most), looked up CHILD_SUFFIXES at a time."""
    number = 2
    while True:
        suffixes = [f"+{n}" for n in range(number, number + CHILD_SUFFIXES)]
        candidates = [run_id[: MAX_ID_CHARS - len(suffix)] + suffix for suffix in suffixes]
        stored = run_store.run_states(store, tenant, candidates)
        free = [candidate for candidate in candidates if candidate not in stored and candidate not in claimed]
        if free:
            return free[0]
        number += CHILD_SUFFIXES


def _from_nanos(unix_nano: int | None) -> datetime | None:
    return None if unix_nano is None else from_epoch_ms(unix_nano // 1_000_000)


_LOADERS: dict[str, Loader] = {RunKind.RUN: _streamed, RunKind.SESSION: _session, RunKind.TRACE: _trace}
