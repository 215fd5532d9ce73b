"""Runs: open, append events, finalize, list, read (with graph and events)."""

from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.concurrency import run_in_threadpool

from service import runs
from service.api import auth
from service.api.openapi import array_or_wrapped, request_body
from service.api.routing import OrjsonRoute
from service.api.schemas import EventsAccepted, FinalizeBody, RunDetail, RunList, RunOpen, StorableTime
from service.diagnosis import parse_run
from service.keys import Principal
from service.store import runs as run_store
from service.store.client import Store

router = APIRouter(prefix="/v1", tags=["runs"], route_class=OrjsonRoute)

EVENTS_BODY = request_body(
    array_or_wrapped("events", {"type": "object"}),
    example=[{"event": "tool_call", "tool": "search", "args": {"q": "tariff"}}],
    ndjson=True,
)


def _store(request: Request) -> Store:
    return request.app.state.store_holder.get()


def _now() -> datetime:
    return datetime.now(UTC)


@router.post("/runs", status_code=201, response_model=RunDetail, summary="Open a run")
def open_run(body: RunOpen, request: Request, principal: Annotated[Principal, Depends(auth.ingest)]) -> Any:
    spec = runs.RunSpec(
        identity=body.identity,
        run_id=body.run_id,
        suite=body.suite or "",
        task_id=body.task_id or "",
        trial=body.trial,
        metadata=body.metadata,
    )
    return runs.detail_of(runs.open_run(_store(request), principal.tenant, spec, _now()))


@router.post(
    "/runs/{run_id:path}/events", response_model=EventsAccepted, summary="Append events", openapi_extra=EVENTS_BODY
)
async def append_events(run_id: str, request: Request, principal: Annotated[Principal, Depends(auth.ingest)]) -> Any:
    events = parse_run(await request.body()).events
    settings = request.app.state.settings
    total = await run_in_threadpool(
        runs.append_events, _store(request), principal.tenant, run_id, events, _now(), settings.max_events_per_run
    )
    request.app.state.metrics.events_ingested.inc(len(events))
    return {"run_id": run_id, "accepted": len(events), "event_count": total}


@router.post("/runs/{run_id:path}/finalize", response_model=RunDetail, summary="Finalize and diagnose a run")
def finalize_run(
    run_id: str,
    request: Request,
    principal: Annotated[Principal, Depends(auth.ingest)],
    body: FinalizeBody | None = None,
) -> Any:
    execution = body.execution.model_dump(exclude_none=True) if body and body.execution else None
    settings = request.app.state.settings
    row = runs.finalize_run(
        _store(request), principal.tenant, run_id, execution, _now(), settings.quality_pass_threshold
    )
    request.app.state.metrics.runs_finalized.inc()
    return runs.detail_of(row)


@router.get("/runs", response_model=RunList, summary="List runs, newest first")
def list_runs(
    request: Request,
    principal: Annotated[Principal, Depends(auth.read)],
    identity: Annotated[str, Query(max_length=256)] = "",
    suite: Annotated[str, Query(max_length=256)] = "",
    readiness: Annotated[str, Query(max_length=64)] = "",
    execution_status: Annotated[str, Query(max_length=64)] = "",
    primary_failure: Annotated[str, Query(max_length=64)] = "",
    status: Annotated[str, Query(max_length=16)] = "",
    since: StorableTime | None = None,
    until: StorableTime | None = None,
    cursor: Annotated[str | None, Query(max_length=1024)] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
) -> Any:
    rows = run_store.list_runs(
        _store(request),
        principal.tenant,
        identity=identity,
        suite=suite,
        readiness=readiness,
        execution_status=execution_status,
        primary_failure=primary_failure,
        status=status,
        since=_utc(since),
        until=_utc(until),
        after=runs.decode_cursor(cursor) if cursor else None,
        limit=limit,
    )
    next_cursor = runs.encode_cursor(rows[-1]) if len(rows) == limit else None
    return {"runs": [runs.summary_of(row) for row in rows], "next_cursor": next_cursor}


def _utc(value: datetime | None) -> datetime | None:
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)


def _get(request: Request, tenant: str, run_id: str) -> dict[str, Any]:
    row = run_store.get_run(_store(request), tenant, run_id)
    if row is None:
        raise runs.RunNotFound(run_id)
    return row


@router.get("/runs/{run_id:path}/graph", summary="The causal graph of a finalized run")
def run_graph(run_id: str, request: Request, principal: Annotated[Principal, Depends(auth.read)]) -> Any:
    diagnosis = runs.detail_of(_get(request, principal.tenant, run_id))["diagnosis"]
    if diagnosis is None:
        raise runs.RunConflict(f"run {run_id} is not finalized yet")
    return diagnosis["causal_graph"]


@router.get("/runs/{run_id:path}/events", summary="The raw events of a run, in order")
def run_events(
    run_id: str,
    request: Request,
    principal: Annotated[Principal, Depends(auth.read)],
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
    limit: Annotated[int, Query(ge=1, le=10_000)] = 1000,
) -> Any:
    _get(request, principal.tenant, run_id)
    events = run_store.list_events(_store(request), principal.tenant, run_id, offset, limit)
    return {"run_id": run_id, "offset": offset, "events": events}


@router.get("/runs/{run_id:path}", response_model=RunDetail, summary="A run with its full diagnosis")
def get_run(run_id: str, request: Request, principal: Annotated[Principal, Depends(auth.read)]) -> Any:
    return runs.detail_of(_get(request, principal.tenant, run_id))
