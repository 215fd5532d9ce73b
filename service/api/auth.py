"""Bearer keys with a tenant and scopes. Missing or unknown key: 401; missing scope: 403.

The key is checked before anything reads or parses the body: FastAPI parses a route's pydantic body
before it runs the route's dependencies, so a dependency alone would let anyone without a key make
the server parse 16 MiB. So every route is a `service.api.routing.KeyFirstRoute`, which resolves the
caller (`resolve_caller`) for the scope its dependencies ask for (`Ingest`, `Read`, `Admin` in
deps.py) before FastAPI's own handler runs; those dependencies then hand the caller to the handler.
"""

from collections.abc import Callable
from typing import Annotated

from fastapi import Depends, FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.dependencies.models import Dependant
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from service.api.errors import Problem
from service.services.keys import Principal, is_operator, verify_key
from service.vocab import Scope as KeyScope

_bearer = HTTPBearer(auto_error=False, description="An API key: `Authorization: Bearer rpt_...`")
_CHALLENGE = {"WWW-Authenticate": "Bearer"}
CALLER = "repute.caller"  # where the resolved principal waits in the ASGI scope for the dependencies


def require(scope: str) -> Callable[..., Principal]:
    """The dependency of a route that needs `scope`: the caller its route resolved. `credentials` is
    unused here: it documents the bearer scheme in the OpenAPI schema."""

    def dependency(
        request: Request, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]
    ) -> Principal:
        principal = request.scope.get(CALLER)
        if principal is None:
            raise RuntimeError(f"{request.url.path}: its route must be a KeyFirstRoute, which checks the key first")
        return principal

    return dependency


ingest = require(KeyScope.INGEST)
read = require(KeyScope.READ)
admin = require(KeyScope.ADMIN)
_SCOPE_OF: dict[Callable[..., Principal], str] = {ingest: KeyScope.INGEST, read: KeyScope.READ, admin: KeyScope.ADMIN}


def required_scope(dependant: Dependant) -> str | None:
    """The scope a route's dependencies ask for (through `Ingest`, `Read` or `Admin`), if any."""
    for dependency in dependant.dependencies:
        if dependency.call in _SCOPE_OF:
            return _SCOPE_OF[dependency.call]
        found = required_scope(dependency)
        if found is not None:
            return found
    return None


def authenticate(app: FastAPI, authorization: str | None, scope: str) -> Principal:
    """The caller holding `authorization` (`Bearer <key>`), if its key is active and has `scope`."""
    kind, _, key = (authorization or "").partition(" ")
    if kind.lower() != "bearer" or not key.strip():
        raise Problem(401, "Unauthorized", "an API key is required: Authorization: Bearer <key>", headers=_CHALLENGE)
    principal = verify_key(app.state.store_holder.get(), key.strip())
    if principal is None:
        raise Problem(401, "Unauthorized", "the API key is unknown or revoked", headers=_CHALLENGE)
    if scope not in principal.scopes:
        raise Problem(403, "Forbidden", f"this key lacks the {scope} scope")
    return principal


async def resolve_caller(request: Request, scope: str) -> None:
    """Leaves the caller in the request for the route's dependency, or refuses the request (401, 403).
    The app's `acting_as` principal, when set, is every request's caller (no key is read)."""
    principal = request.app.state.acting_as or await run_in_threadpool(
        authenticate, request.app, request.headers.get("authorization"), scope
    )
    request.scope[CALLER] = principal


def tenant_acted_on(principal: Principal, tenant: str | None, refusal: str) -> str:
    """The tenant an admin request acts on: `tenant` (the caller's own when None) if the caller may, that
    is its own or, for the operator tenant, any; else 403 naming the `tenant` field with `refusal`."""
    chosen = tenant or principal.tenant
    if chosen != principal.tenant and not is_operator(principal):
        raise Problem(403, "Forbidden", refusal, field="tenant")
    return chosen
