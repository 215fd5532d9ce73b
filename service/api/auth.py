"""Bearer keys with a tenant and scopes. Missing or unknown key: 401; missing scope: 403."""

from collections.abc import Callable
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from service.api.errors import Problem
from service.services.keys import Principal, verify_key

_bearer = HTTPBearer(auto_error=False, description="An API key: `Authorization: Bearer rpt_...`")
_CHALLENGE = {"WWW-Authenticate": "Bearer"}


def require(scope: str) -> Callable[..., Principal]:
    def dependency(
        request: Request, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]
    ) -> Principal:
        if credentials is None or credentials.scheme.lower() != "bearer":
            raise Problem(
                401, "Unauthorized", "an API key is required: Authorization: Bearer <key>", headers=_CHALLENGE
            )
        principal = verify_key(request.app.state.store_holder.get(), credentials.credentials)
        if principal is None:
            raise Problem(401, "Unauthorized", "the API key is unknown or revoked", headers=_CHALLENGE)
        if scope not in principal.scopes:
            raise Problem(403, "Forbidden", f"this key lacks the {scope!r} scope")
        return principal

    return dependency


ingest = require("ingest")
read = require("read")
admin = require("admin")
SCOPE_DEPENDENCIES = (ingest, read, admin)
