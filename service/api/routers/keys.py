"""API keys (admin). The operator tenant `default` manages every tenant's keys; other admins their own."""

from typing import Any

from fastapi import APIRouter, Response

from service.api.auth import tenant_acted_on
from service.api.deps import Admin, Now, StoreDep
from service.api.errors import Problem
from service.api.openapi import NOT_FOUND
from service.api.routing import KeyFirstRoute
from service.api.schemas import KeyCreate, KeyCreated, KeyList
from service.services import keys

router = APIRouter(prefix="/v1", tags=["keys"], route_class=KeyFirstRoute)


@router.post("/keys", status_code=201, response_model=KeyCreated, summary="Create a key (shown once)")
def create_key(body: KeyCreate, principal: Admin, store: StoreDep, now: Now) -> Any:
    tenant = tenant_acted_on(principal, body.tenant, "only the operator tenant creates keys for other tenants")
    created = keys.create_key(store, tenant, list(body.scopes), body.name, now)
    return {
        "id": created.key_id,
        "key": created.key,
        "tenant": created.tenant,
        "scopes": created.scopes,
        "name": created.name,
    }


def _managed_tenant(principal: keys.Principal) -> str | None:
    return None if keys.is_operator(principal) else principal.tenant


@router.get("/keys", response_model=KeyList, summary="List keys (never the secrets)")
def list_keys(principal: Admin, store: StoreDep) -> Any:
    return {"keys": keys.list_keys(store, _managed_tenant(principal))}


@router.delete("/keys/{key_id}", status_code=204, summary="Revoke a key", responses=NOT_FOUND)
def revoke_key(key_id: str, principal: Admin, store: StoreDep, now: Now) -> Response:
    if not keys.revoke_key(store, _managed_tenant(principal), key_id, now):
        raise Problem(404, "Not Found", f"no active key {key_id!r}")
    return Response(status_code=204)
