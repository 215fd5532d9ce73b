"""Reputation signals in; identity reputation, fleet list and history out."""

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Depends, Query, Request
from fastapi.concurrency import run_in_threadpool

from service.api import auth
from service.api.errors import Problem
from service.api.routing import OrjsonRoute
from service.api.schemas import History, IdentityList, Reputation, SignalBatch, SignalsAccepted, StorableDay
from service.keys import Principal
from service.reputation import report
from service.store import reputation as reputation_store
from service.store.client import Store

router = APIRouter(prefix="/v1", tags=["reputation"], route_class=OrjsonRoute)

_PAYMENT = {"identity": "agent-atlas", "category": "economic", "event_type": "payment_completed", "score_delta": 1}
SIGNAL_EXAMPLES = {
    "batch": {"summary": "an object with events", "value": {"events": [_PAYMENT]}},
    "array": {"summary": "a bare array", "value": [_PAYMENT]},
}


def _store(request: Request) -> Store:
    return request.app.state.store_holder.get()


def _not_found(identity: str) -> Problem:
    return Problem(404, "Not Found", f"no identity {identity!r}")


@router.post("/reputation-events", status_code=202, response_model=SignalsAccepted, summary="Post reputation signals")
def post_signals(
    request: Request,
    principal: Annotated[Principal, Depends(auth.ingest)],
    body: Annotated[SignalBatch, Body(openapi_examples=SIGNAL_EXAMPLES)],
) -> Any:
    signals = body.events
    now = datetime.now(UTC)
    events = [report.signal_event(principal.tenant, s.model_dump(), now, f"events[{i}]") for i, s in enumerate(signals)]
    accepted = reputation_store.insert_events(_store(request), principal.tenant, events)
    return {
        "accepted": accepted,
        "duplicates": len(events) - accepted,
        "event_ids": [str(e.event_id) for e in events],
    }


@router.get("/identities", response_model=IdentityList, summary="The fleet: identities with reputation")
def list_identities(
    request: Request,
    principal: Annotated[Principal, Depends(auth.read)],
    sort: Literal["overall", "confidence", "trend_7d", "trend_30d", "events", "identity"] = "overall",
    order: Literal["asc", "desc"] = "desc",
    min_confidence: Annotated[float, Query(ge=0, le=1)] = 0.0,
    prefix: Annotated[str, Query(max_length=256)] = "",
    limit: Annotated[int, Query(ge=1, le=10_000)] = 100,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> Any:
    return report.fleet(
        _store(request),
        principal.tenant,
        sort=sort,
        descending=order == "desc",
        min_confidence=min_confidence,
        prefix=prefix,
        limit=limit,
        offset=offset,
    )


@router.get("/identities/{identity:path}/reputation", response_model=Reputation, summary="Reputation of one identity")
def identity_reputation(
    identity: str,
    request: Request,
    principal: Annotated[Principal, Depends(auth.read)],
    as_of: StorableDay | None = None,
) -> Any:
    day = as_of or datetime.now(UTC).date()
    found = report.reputation_report(_store(request), principal.tenant, identity, day)
    if found is None:
        raise _not_found(identity)
    return found


@router.get("/identities/{identity:path}/history", response_model=History, summary="Daily trust and reputation")
async def identity_history(
    identity: str,
    request: Request,
    principal: Annotated[Principal, Depends(auth.read)],
    days: Annotated[int, Query(ge=1, le=90)] = 30,
) -> Any:
    today = datetime.now(UTC).date()
    found = await run_in_threadpool(report.history, _store(request), principal.tenant, identity, days, today)
    if found is None:
        raise _not_found(identity)
    return found
