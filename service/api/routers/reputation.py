"""Reputation signals in; identity reputation, fleet list and history out."""

from functools import partial
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Query
from fastapi.concurrency import run_in_threadpool

from service.api.auth import tenant_acted_on
from service.api.deps import Admin, Ingest, Now, Read, StoreDep, WritingDep
from service.api.errors import Problem
from service.api.openapi import NOT_FOUND
from service.api.routing import KeyFirstRoute
from service.api.schemas import (
    Credibility,
    History,
    IdentityList,
    RebuildReport,
    Reputation,
    SignalBatch,
    SignalsAccepted,
    Source,
    SourceList,
    StorableDay,
)
from service.ids import Identifier
from service.services import rebuild, reputation
from service.services.responses import position_cursor, position_of
from service.vocab import IdentitySort

router = APIRouter(prefix="/v1", tags=["reputation"], route_class=KeyFirstRoute)
FLEET_CURSOR = "identities"

_PAYMENT = {"identity": "agent-atlas", "category": "economic", "event_type": "payment_completed", "score_delta": 1}
SIGNAL_EXAMPLES = {
    "batch": {"summary": "an object with events", "value": {"events": [_PAYMENT]}},
    "array": {"summary": "a bare array", "value": [_PAYMENT]},
}


def _not_found(identity: str) -> Problem:
    return Problem(404, "Not Found", f"no identity {identity!r}")


@router.post("/reputation-events", status_code=202, response_model=SignalsAccepted, summary="Post reputation signals")
async def post_signals(
    principal: Ingest, writing: WritingDep, body: Annotated[SignalBatch, Body(openapi_examples=SIGNAL_EXAMPLES)]
) -> Any:
    signals = [s.model_dump() for s in body.events]
    job = partial(reputation.post_signals, writing.store, principal, signals, writing.now)
    return await writing.writes.run(principal.tenant, job)


@router.get("/identities", response_model=IdentityList, summary="The fleet: identities with reputation")
def list_identities(
    principal: Read,
    store: StoreDep,
    now: Now,
    sort: IdentitySort = IdentitySort.OVERALL,
    order: Literal["asc", "desc"] = "desc",
    min_confidence: Annotated[float, Query(ge=0, le=1)] = 0.0,
    prefix: Annotated[str, Query(max_length=256)] = "",
    q: Annotated[str, Query(max_length=256, description="identities holding this, in any case")] = "",
    cursor: Annotated[str | None, Query(max_length=1024)] = None,
    limit: Annotated[int, Query(ge=1, le=10_000)] = 100,
) -> Any:
    offset = position_of(FLEET_CURSOR, cursor)
    found = reputation.fleet(
        store,
        principal.tenant,
        now,
        sort=sort,
        descending=order == "desc",
        min_confidence=min_confidence,
        prefix=prefix,
        q=q,
        limit=limit,
        offset=offset,
    )
    full = len(found["identities"]) == limit
    return {**found, "next_cursor": position_cursor(FLEET_CURSOR, offset + limit) if full else None}


@router.get(
    "/identities/{identity:path}/reputation",
    response_model=Reputation,
    summary="Reputation of one identity",
    responses=NOT_FOUND,
)
def identity_reputation(
    identity: str,
    principal: Read,
    store: StoreDep,
    now: Now,
    as_of: StorableDay | None = None,
) -> Any:
    found = reputation.reputation_report(store, principal.tenant, identity, as_of or now.date())
    if found is None:
        raise _not_found(identity)
    return found


@router.get(
    "/identities/{identity:path}/history",
    response_model=History,
    summary="Daily trust and reputation",
    responses=NOT_FOUND,
)
async def identity_history(
    identity: str,
    principal: Read,
    store: StoreDep,
    now: Now,
    days: Annotated[int, Query(ge=1, le=90)] = 30,
) -> Any:
    found = await run_in_threadpool(reputation.history, store, principal.tenant, identity, days, now.date())
    if found is None:
        raise _not_found(identity)
    return found


@router.get(
    "/identities/{identity:path}/reputation/explain",
    summary="Why an identity's reputation is what it is: per event type now and 7 days earlier, top runs",
    responses=NOT_FOUND,
)
def explain_reputation(
    identity: str, principal: Read, store: StoreDep, now: Now, as_of: StorableDay | None = None
) -> Any:
    found = reputation.explain(store, principal.tenant, identity, as_of or now.date())
    if found is None:
        raise _not_found(identity)
    return found


@router.get("/sources", response_model=SourceList, summary="Sources of reputation signals and their credibility")
def list_sources(principal: Admin, store: StoreDep) -> Any:
    return reputation.sources(store, principal.tenant)


@router.put(
    "/sources/{key_id}",
    response_model=Source,
    summary="Set a source's credibility (applies to the past too)",
    responses=NOT_FOUND,
)
def set_source(key_id: str, body: Credibility, principal: Admin, store: StoreDep, now: Now) -> Any:
    return reputation.set_source_credibility(store, principal, key_id, body.credibility, now)


@router.post(
    "/reputation/rebuild",
    response_model=RebuildReport,
    summary="Re-emit the finalized runs' reputation events under the current model (idempotent)",
)
async def rebuild_reputation(
    principal: Admin,
    writing: WritingDep,
    tenant: Annotated[
        Identifier | None, Query(description="default: the key's own; another: the operator only")
    ] = None,
    rediagnose: Annotated[
        bool, Query(description="diagnose the runs again from their stored events under the profiles in force")
    ] = False,
) -> Any:
    """Retracts the run events the current model (SPEC §7) no longer emits and emits those it does, for one
    tenant's finalized runs; a second call finds nothing to do. Run it after upgrading from a version whose
    reputation model differed, and with `rediagnose=true` after changing the diagnosis profiles (SPEC §4.1)."""
    acted_on = tenant_acted_on(principal, tenant, "only the operator tenant rebuilds another tenant")

    def rebuilt() -> rebuild.RebuildReport:
        threshold = writing.settings.quality_pass_threshold
        how = rebuild.rediagnosis(writing.store, acted_on, threshold, writing.now) if rediagnose else None
        return rebuild.rebuild(writing.store, acted_on, rediagnose=how)

    return await writing.writes.run(acted_on, rebuilt)
