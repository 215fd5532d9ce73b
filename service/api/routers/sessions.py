"""Whole runs in one request: stored, finalized and diagnosed at once."""

from collections.abc import Sequence
from datetime import UTC, datetime
from functools import partial
from typing import Annotated, Any

import orjson
from anyio import CapacityLimiter, to_thread
from fastapi import APIRouter, Depends, Request, Response

from service.api.coalesce import Coalescer
from service.api.deps import Ingest, MetricsDep, Now, SettingsDep, StoreDep, WriteLimiter
from service.api.openapi import CONFLICT, array_or_wrapped, inline_schema, request_body
from service.api.routing import KeyFirstRoute, parse_body
from service.api.schemas import SessionBatchResult, SessionResult
from service.api.state import StoreHolder
from service.diagnosis import RunInput, parse_run, parse_runs
from service.errors import ClientError
from service.services.inputs import SessionBody, SessionInput, session_inputs
from service.services.runs import Ingested, ingest_each, ingest_sessions
from service.services.views import run_summary
from service.settings import Settings

router = APIRouter(prefix="/v1", tags=["sessions"], route_class=KeyFirstRoute)
VERDICT_FIELDS = (
    "run_id", "execution_status", "failure_stage", "failure_reason_code", "trust_score", "readiness_level",
    "primary_failure", "tool_calls",
)  # fmt: skip

_RUN_SCHEMA = inline_schema(SessionBody)
SESSION_BODY = request_body(_RUN_SCHEMA)
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
    """Parses, stores and finalizes runs for a tenant; counts what was created in the metrics."""

    def __init__(
        self, store: StoreDep, settings: SettingsDep, metrics: MetricsDep, now: Now, limiter: WriteLimiter
    ) -> None:
        self.store, self.settings, self.metrics, self.now, self.limiter = store, settings, metrics, now, limiter

    async def batch(self, tenant: str, inputs: list[RunInput]) -> list[Ingested]:
        results = await to_thread.run_sync(self._ingest_batch, tenant, inputs, limiter=self.limiter)
        self._count(results)
        return results

    async def single(self, request: Request, tenant: str, run: RunInput) -> Ingested:
        result: Ingested = await request.app.state.single_runs.submit((tenant, run))
        self._count([result])
        return result

    def _count(self, results: list[Ingested]) -> None:
        created = [r for r in results if r.created]
        self.metrics.runs_finalized.inc(len(created))
        self.metrics.events_ingested.inc(sum(r.record.event_count for r in created))

    def _ingest_batch(self, tenant: str, inputs: list[RunInput]) -> list[Ingested]:
        sessions = session_inputs(inputs, self.settings)
        return ingest_sessions(self.store, tenant, sessions, self.now, self.settings.quality_pass_threshold)


IngestDep = Annotated[_Ingest, Depends()]
SingleRun = tuple[str, RunInput]  # the tenant and the run it sent
MAX_SINGLES_PER_WRITE = 200


def single_run_writer(holder: StoreHolder, settings: Settings) -> Coalescer:
    """POST /v1/sessions requests written together while the store is busy (see `coalesce`), one group at a
    time in a lane of their own: a single run never waits behind a batch."""
    return Coalescer(partial(_ingest_singles, holder, settings), CapacityLimiter(1), MAX_SINGLES_PER_WRITE)


def _ingest_singles(holder: StoreHolder, settings: Settings, items: Sequence[SingleRun]) -> list[Ingested | Exception]:
    """Each run validated on its own: a bad one fails alone, the others are stored together."""
    parsed: list[tuple[str, SessionInput] | ClientError] = []
    for tenant, run in items:
        try:
            parsed.append((tenant, session_inputs([run], settings)[0]))
        except ClientError as exc:
            parsed.append(exc)
    valid = [item for item in parsed if not isinstance(item, ClientError)]
    stored = iter(ingest_each(holder.get(), valid, datetime.now(UTC), settings.quality_pass_threshold) if valid else ())
    return [item if isinstance(item, ClientError) else next(stored) for item in parsed]


@router.post(
    "/sessions",
    status_code=201,
    response_model=SessionResult,
    summary="Store, finalize and diagnose a whole run",
    openapi_extra=SESSION_BODY,
    responses={200: {"description": "the run was already finalized; the stored result"}, **CONFLICT},
)
async def post_session(request: Request, principal: Ingest, ingest: IngestDep) -> Response:
    result = await ingest.single(request, principal.tenant, await parse_body(request, parse_run))
    body = {**_verdict(result), "diagnosis": orjson.Fragment(result.record.diagnosis)}
    return _json(body, 201 if result.created else 200)


@router.post(
    "/sessions/batch",
    status_code=201,
    response_model=SessionBatchResult,
    summary="Many whole runs in one request (all or nothing); answers each run's verdict",
    openapi_extra=BATCH_BODY,
    responses=CONFLICT,
)
async def post_sessions(request: Request, principal: Ingest, ingest: IngestDep) -> Response:
    results = await ingest.batch(principal.tenant, await parse_body(request, parse_runs))
    return _json({"results": [_verdict(r) for r in results]}, 201)
