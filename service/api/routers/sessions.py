"""Whole runs in one request: stored, finalized and diagnosed at once, in the write pool (api/writes.py):
single runs of one tenant queued meanwhile are written together, a batch is one job."""

from collections.abc import Sequence
from datetime import UTC, datetime
from functools import partial
from typing import Any

import orjson
from fastapi import APIRouter, Request, Response

from service.api.deps import Ingest, Writing, WritingDep
from service.api.openapi import CONFLICT, array_or_wrapped, inline_schema, request_body
from service.api.routing import KeyFirstRoute
from service.api.schemas import SessionBatchResult, SessionResult
from service.api.state import StoreHolder
from service.api.writes import GroupKind
from service.errors import ClientError
from service.services.inputs import SessionBody
from service.services.receivers.whole import Ingested, ingest_batch, ingest_posted
from service.services.responses import run_summary
from service.settings import Settings

router = APIRouter(prefix="/v1", tags=["sessions"], route_class=KeyFirstRoute)
VERDICT_FIELDS = (
    "run_id", "execution_status", "failure_stage", "failure_reason_code", "trust_score", "readiness_level",
    "primary_failure", "tool_calls",
)  # fmt: skip

_RUN_SCHEMA = inline_schema(SessionBody)
SESSION_BODY = request_body(_RUN_SCHEMA)
BATCH_BODY = request_body(array_or_wrapped("sessions", _RUN_SCHEMA), ndjson=True)
PostedRun = tuple[str, bytes]  # the tenant, and the body it sent


def posted_runs(holder: StoreHolder, settings: Settings) -> GroupKind[PostedRun, Ingested]:
    """The group kind of POST /v1/sessions: the write pool hands it one tenant's bodies queued together."""

    def ingest(items: Sequence[PostedRun]) -> Sequence[Ingested | ClientError]:
        tenant = items[0][0]
        return ingest_posted(holder.get(), tenant, [body for _, body in items], settings, datetime.now(UTC))

    return GroupKind("posted runs", ingest)


def _verdict(item: Ingested) -> dict[str, Any]:
    summary = run_summary(item.record)
    return {
        **{field: summary[field] for field in VERDICT_FIELDS},
        "created": item.created,
        "diagnosis_hash": item.record.diagnosis_hash,
    }


def _json(body: Any, status: int) -> Response:
    """Encoded once with orjson: the generic encoder is slow on diagnoses (a causal graph each)."""
    return Response(orjson.dumps(body), status_code=status, media_type="application/json")


def _count(writing: Writing, results: list[Ingested]) -> None:
    created = [r for r in results if r.created]
    writing.metrics.runs_finalized.inc(len(created))
    writing.metrics.events_ingested.inc(sum(r.record.event_count for r in created))


@router.post(
    "/sessions",
    status_code=201,
    response_model=SessionResult,
    summary="Store, finalize and diagnose a whole run",
    openapi_extra=SESSION_BODY,
    responses={200: {"description": "the run was already finalized; the stored result"}, **CONFLICT},
)
async def post_session(request: Request, principal: Ingest, writing: WritingDep) -> Response:
    body = await request.body()
    result = await writing.writes.run_in_group(
        principal.tenant, request.app.state.posted_runs, (principal.tenant, body)
    )
    _count(writing, [result])
    return _json(
        {**_verdict(result), "diagnosis": orjson.Fragment(result.record.diagnosis)}, 201 if result.created else 200
    )


@router.post(
    "/sessions/batch",
    status_code=201,
    response_model=SessionBatchResult,
    summary="Many whole runs in one request (all or nothing); answers each run's verdict",
    openapi_extra=BATCH_BODY,
    responses=CONFLICT,
)
async def post_sessions(request: Request, principal: Ingest, writing: WritingDep) -> Response:
    body = await request.body()
    job = partial(ingest_batch, writing.store, principal.tenant, body, writing.settings, writing.now)
    results = await writing.writes.run(principal.tenant, job)
    _count(writing, results)
    return _json({"results": [_verdict(r) for r in results]}, 201)
