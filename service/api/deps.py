"""What routers take from a request: the store, the settings, the metrics, the caller (by scope), now."""

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Annotated

from fastapi import Depends, Request

from service.api import auth
from service.api.metrics import Metrics
from service.services.keys import Principal
from service.settings import Settings
from service.store.client import Store


def _store(request: Request) -> Store:
    return request.app.state.store_holder.get()


def _settings(request: Request) -> Settings:
    return request.app.state.settings


def _metrics(request: Request) -> Metrics:
    return request.app.state.metrics


def _now() -> datetime:
    return datetime.now(UTC)


def _recording_tenant(scope_dependency: Callable[..., Principal]) -> Callable[..., Principal]:
    """The caller of `scope_dependency`, with its tenant kept in the request state for the access log."""

    def dependency(request: Request, principal: Annotated[Principal, Depends(scope_dependency)]) -> Principal:
        request.state.tenant = principal.tenant
        return principal

    return dependency


StoreDep = Annotated[Store, Depends(_store)]
SettingsDep = Annotated[Settings, Depends(_settings)]
MetricsDep = Annotated[Metrics, Depends(_metrics)]
Now = Annotated[datetime, Depends(_now)]
Ingest = Annotated[Principal, Depends(_recording_tenant(auth.ingest))]
Read = Annotated[Principal, Depends(_recording_tenant(auth.read))]
Admin = Annotated[Principal, Depends(_recording_tenant(auth.admin))]
