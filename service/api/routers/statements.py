"""Signed reputation statements (SPEC §15): an identity's statement and an event's inclusion proof (read
scope), and every tenant's public statement keys (no key needed: a verifier has none)."""

from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.concurrency import run_in_threadpool

from service.api.deps import Admin, Now, Read, SettingsDep, StoreDep
from service.api.openapi import NOT_FOUND
from service.api.routing import KeyFirstRoute
from service.api.schemas import StorableDay
from service.services import statements

router = APIRouter(tags=["statements"], route_class=KeyFirstRoute)


@router.get(
    "/v1/identities/{identity:path}/statement/proof",
    summary="An event's canonical row and its inclusion proof in the identity's statement",
    responses=NOT_FOUND,
)
async def statement_proof(
    identity: str,
    principal: Read,
    store: StoreDep,
    now: Now,
    event_id: Annotated[str, Query(min_length=1, max_length=64)],
    as_of: StorableDay | None = None,
) -> Any:
    day = as_of or now.date()
    return await run_in_threadpool(statements.inclusion, store, principal.tenant, identity, day, event_id)


@router.get(
    "/v1/identities/{identity:path}/statement",
    summary="The identity's reputation as a signed statement (a DSSE envelope, Ed25519)",
    responses=NOT_FOUND,
)
async def statement(
    identity: str, principal: Read, store: StoreDep, settings: SettingsDep, now: Now, as_of: StorableDay | None = None
) -> Any:
    day = as_of or now.date()
    return await run_in_threadpool(statements.statement, store, settings, principal.tenant, identity, day, now)


@router.get("/.well-known/repute-keys.json", summary="Every tenant's public statement keys (no key needed)")
def repute_keys(settings: SettingsDep) -> Any:
    return statements.public_keys(settings)


@router.post("/v1/keys/signing/rotate", summary="Retire the tenant's statement signing key and make a new one")
def rotate_signing_key(principal: Admin, settings: SettingsDep, now: Now) -> Any:
    return statements.rotate(settings, principal.tenant, now)
