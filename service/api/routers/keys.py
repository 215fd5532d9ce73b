"""API keys (admin). The operator tenant `default` manages every tenant's keys; other admins their own."""

from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response

from service import keys
from service.api import auth
from service.api.errors import Problem
from service.api.routing import OrjsonRoute
from service.api.schemas import KeyCreate, KeyCreated, KeyList
from service.keys import Principal
from service.store import keys as key_store

router = APIRouter(prefix="/v1", tags=["keys"], route_class=OrjsonRoute)


def _operator(principal: Principal) -> bool:
    return principal.tenant == keys.DEFAULT_TENANT


@router.post("/keys", status_code=201, response_model=KeyCreated, summary="Create a key (shown once)")
def create_key(body: KeyCreate, request: Request, principal: Annotated[Principal, Depends(auth.admin)]) -> Any:
    if body.tenant != principal.tenant and not _operator(principal):
        raise Problem(403, "Forbidden", "only the operator tenant creates keys for other tenants", field="tenant")
    store = request.app.state.store_holder.get()
    created = keys.create_key(store, body.tenant, list(body.scopes), body.name, datetime.now(UTC))
    return {
        "id": created.key_id,
        "key": created.key,
        "tenant": created.tenant,
        "scopes": created.scopes,
        "name": created.name,
    }


@router.get("/keys", response_model=KeyList, summary="List keys (never the secrets)")
def list_keys(request: Request, principal: Annotated[Principal, Depends(auth.admin)]) -> Any:
    tenant = None if _operator(principal) else principal.tenant
    rows = key_store.list_keys(request.app.state.store_holder.get(), tenant)
    return {
        "keys": [
            {
                "id": r["key_id"],
                "tenant": r["tenant"],
                "scopes": list(r["scopes"]),
                "name": r["name"],
                "created_at": r["created_at"],
                "revoked_at": r["revoked_at"],
            }
            for r in rows
        ]
    }


@router.delete("/keys/{key_id}", status_code=204, summary="Revoke a key")
def revoke_key(key_id: str, request: Request, principal: Annotated[Principal, Depends(auth.admin)]) -> Response:
    tenant = None if _operator(principal) else principal.tenant
    if not keys.revoke_key(request.app.state.store_holder.get(), tenant, key_id, datetime.now(UTC)):
        raise Problem(404, "Not Found", f"no active key {key_id!r}")
    return Response(status_code=204)
