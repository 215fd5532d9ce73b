"""Whole runs in one request: stored, finalized and diagnosed at once."""

from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Depends, Request, Response
from fastapi.concurrency import run_in_threadpool

from service.api.deps import Ingest, MetricsDep, Now, SettingsDep, StoreDep
from service.api.openapi import array_or_wrapped, request_body
from service.api.routing import KeyFirstRoute, parse_body
from service.api.schemas import SessionBatchResult, SessionResult
from service.diagnosis import RunInput, parse_run, parse_runs
from service.services.inputs import session_inputs
from service.services.runs import Ingested, ingest_sessions
from service.services.views import run_summary

router = APIRouter(prefix="/v1", tags=["sessions"], route_class=KeyFirstRoute)
VERDICT_FIELDS = (
    "run_id", "execution_status", "failure_stage", "failure_reason_code", "trust_score", "readiness_level",
    "primary_failure", "tool_calls",
)  # fmt: skip

_RUN_SCHEMA = {
    "type": "object",
    "required": ["identity", "events"],
    "properties": {
        "run_id": {"type": "string"},
        "identity": {"type": "string"},
        "suite": {"type": "string"},
        "task_id": {"type": "string"},
        "trial": {"type": "integer"},
        "metadata": {"type": "object"},
        "execution": {"type": "object"},
        "events": {"type": "array", "items": {"type": "object"}},
    },
}
SESSION_BODY = request_body(
    _RUN_SCHEMA,
    example={
        "run_id": "run-clean-001",
        "identity": "agent-atlas",
        "events": [{"event": "tool_call", "tool": "search", "args": {"q": "tariff code 8471"}}],
    },
)
BATCH_BODY = request_body(array_or_wrapped("sessions", _RUN_SCHEMA), ndjson=True)


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


class _Ingest:
    """Stores and finalizes parsed runs for a tenant; counts what was created in the metrics."""

    def __init__(self, store: StoreDep, settings: SettingsDep, metrics: MetricsDep, now: Now) -> None:
        self.store, self.settings, self.metrics, self.now = store, settings, metrics, now

    async def __call__(self, tenant: str, inputs: list[RunInput]) -> list[Ingested]:
        def validate_and_ingest() -> list[Ingested]:
            sessions = session_inputs(inputs, self.settings)
            return ingest_sessions(self.store, tenant, sessions, self.now, self.settings.quality_pass_threshold)

        results = await run_in_threadpool(validate_and_ingest)
        created = [r for r in results if r.created]
        self.metrics.runs_finalized.inc(len(created))
        self.metrics.events_ingested.inc(sum(r.record.event_count for r in created))
        return results


IngestDep = Annotated[_Ingest, Depends()]


@router.post(
    "/sessions",
    status_code=201,
    response_model=SessionResult,
    summary="Store, finalize and diagnose a whole run",
    openapi_extra=SESSION_BODY,
    responses={200: {"description": "the run was already finalized; the stored result"}},
)
async def post_session(request: Request, principal: Ingest, ingest: IngestDep) -> Response:
    run = await parse_body(request, parse_run)
    result = (await ingest(principal.tenant, [run]))[0]
    body = {**_verdict(result), "diagnosis": orjson.Fragment(result.record.diagnosis)}
    return _json(body, 201 if result.created else 200)


@router.post(
    "/sessions/batch",
    status_code=201,
    response_model=SessionBatchResult,
    summary="Many whole runs in one request (all or nothing); answers each run's verdict",
    openapi_extra=BATCH_BODY,
)
async def post_sessions(request: Request, principal: Ingest, ingest: IngestDep) -> Response:
    inputs = await parse_body(request, parse_runs)
    return _json({"results": [_verdict(r) for r in await ingest(principal.tenant, inputs)]}, 201)
