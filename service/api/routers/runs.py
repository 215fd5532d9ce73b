"""Runs: open, append events, finalize, list, read (with graph and events)."""

from datetime import UTC, datetime
from enum import StrEnum
from functools import partial
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.concurrency import run_in_threadpool

from service.api.deps import Ingest, Read, StoreDep, WritingDep
from service.api.openapi import CONFLICT, NOT_FOUND, array_or_wrapped, request_body
from service.api.routing import KeyFirstRoute
from service.api.schemas import EventsAccepted, FinalizeBody, RunDetail, RunEvents, RunList, StorableTime
from service.diagnosis.failure_types import FailureType
from service.errors import Conflict
from service.services import finalize, runs
from service.services.inputs import RunFields, header_of_fields
from service.services.receivers import stream
from service.services.responses import (
    decode_cursor,
    encode_cursor,
    position_cursor,
    position_of,
    run_detail,
    run_summary,
)
from service.vocab import ExecutionStatus, Readiness, RunStatus

router = APIRouter(prefix="/v1", tags=["runs"], route_class=KeyFirstRoute)
EVENTS_CURSOR = "events"

EVENTS_BODY = request_body(
    array_or_wrapped("events", {"type": "object"}),
    example=[{"event": "tool_call", "tool": "search", "args": {"q": "tariff"}}],
    ndjson=True,
)


@router.post("/runs", status_code=201, response_model=RunDetail, summary="Open a run", responses=CONFLICT)
async def open_run(body: RunFields, principal: Ingest, writing: WritingDep) -> Any:
    job = partial(stream.open_run, writing.store, principal.tenant, header_of_fields(body), writing.now)
    return run_detail(await writing.writes.run(principal.tenant, job))


@router.post(
    "/runs/{run_id:path}/events",
    response_model=EventsAccepted,
    summary="Append events",
    openapi_extra=EVENTS_BODY,
    responses={**NOT_FOUND, **CONFLICT},
)
async def append_events(run_id: str, request: Request, principal: Ingest, writing: WritingDep) -> Any:
    body = await request.body()
    append = partial(stream.append_posted, writing.store, principal.tenant, run_id, body, writing.settings, writing.now)
    appended = await writing.writes.run(principal.tenant, append)
    writing.metrics.events_ingested.inc(appended.accepted)
    return {"run_id": run_id, "accepted": appended.accepted, "event_count": appended.event_count}


@router.post(
    "/runs/{run_id:path}/finalize",
    response_model=RunDetail,
    summary="Finalize and diagnose a run",
    responses=NOT_FOUND,
)
async def finalize_run(run_id: str, principal: Ingest, writing: WritingDep, body: FinalizeBody | None = None) -> Any:
    execution = body.execution.model_dump(exclude_none=True) if body and body.execution else None
    store, threshold = writing.store, writing.settings.quality_pass_threshold
    job = partial(finalize.finalize_run, store, principal.tenant, run_id, execution, writing.now, threshold)
    record = await writing.writes.run(principal.tenant, job)
    children = await run_in_threadpool(runs.child_runs, store, principal.tenant, run_id)
    writing.metrics.runs_finalized.inc(1 + len(children))
    return run_detail(record, children)


@router.get("/runs", response_model=RunList, summary="List runs, newest first")
def list_runs(
    principal: Read,
    store: StoreDep,
    identity: Annotated[str, Query(max_length=256)] = "",
    suite: Annotated[str, Query(max_length=256)] = "",
    parent: Annotated[str, Query(max_length=256, description="the child runs of this run (SPEC §3.5)")] = "",
    readiness: Readiness | None = None,
    execution_status: ExecutionStatus | None = None,
    primary_failure: FailureType | None = None,
    status: RunStatus | None = None,
    since: StorableTime | None = None,
    until: StorableTime | None = None,
    cursor: Annotated[str | None, Query(max_length=1024)] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
) -> Any:
    records = runs.list_runs(
        store,
        principal.tenant,
        identity=identity,
        suite=suite,
        parent=parent,
        readiness=_any(readiness),
        execution_status=_any(execution_status),
        primary_failure=_any(primary_failure),
        status=_any(status),
        since=_utc(since),
        until=_utc(until),
        after=decode_cursor(cursor) if cursor else None,
        limit=limit,
    )
    next_cursor = encode_cursor(records[-1]) if len(records) == limit else None
    return {"runs": [run_summary(record) for record in records], "next_cursor": next_cursor}


def _any(choice: StrEnum | None) -> str:
    """A filter's value for the store, where '' matches any."""
    return str(choice) if choice else ""


def _utc(value: datetime | None) -> datetime | None:
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)


@router.get("/runs/{run_id:path}/graph", summary="The causal graph of a finalized run", responses=NOT_FOUND)
def run_graph(run_id: str, principal: Read, store: StoreDep) -> Any:
    diagnosis = run_detail(runs.stored_run(store, principal.tenant, run_id))["diagnosis"]
    if diagnosis is None:
        raise Conflict(f"run {run_id} is not finalized yet")
    return diagnosis["causal_graph"]


@router.get(
    "/runs/{run_id:path}/events",
    summary="The raw events of a run, in order",
    responses={
        200: {"model": RunEvents},
        **NOT_FOUND,
    },  # documented, not re-validated: a page holds up to 10,000 events
)
def run_events(
    run_id: str,
    principal: Read,
    store: StoreDep,
    cursor: Annotated[str | None, Query(max_length=1024)] = None,
    limit: Annotated[int, Query(ge=1, le=10_000)] = 1000,
) -> Any:
    page = runs.list_events(store, principal.tenant, run_id, position_of(EVENTS_CURSOR, cursor), limit)
    next_seq = page.events[-1]["seq"] + 1 if page.events else page.total
    next_cursor = position_cursor(EVENTS_CURSOR, next_seq) if next_seq < page.total else None
    return {"run_id": run_id, "events": page.events, "total": page.total, "next_cursor": next_cursor}


@router.get(
    "/runs/{run_id:path}",
    response_model=RunDetail,
    summary="A run with its full diagnosis and child runs",
    responses=NOT_FOUND,
)
def get_run(run_id: str, principal: Read, store: StoreDep) -> Any:
    return run_detail(*runs.run_with_children(store, principal.tenant, run_id))
