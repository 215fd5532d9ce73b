"""What routers take from a request: the store, the settings, the metrics, the caller (by scope), now."""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated

from fastapi import Depends, Request
from fastapi.concurrency import run_in_threadpool

from service.api import auth
from service.api.metrics import Metrics
from service.api.writes import Writes
from service.services.keys import Principal
from service.settings import Settings
from service.store.client import Store


# Coroutines, not plain functions: FastAPI runs a plain dependency in the threadpool, a hop per dependency
# per request that queues behind busy threads under load.
async def _store(request: Request) -> Store:
    holder = request.app.state.store_holder
    return holder.get() if holder.opened else await run_in_threadpool(holder.get)  # opening may block


async def _settings(request: Request) -> Settings:
    return request.app.state.settings


async def _metrics(request: Request) -> Metrics:
    return request.app.state.metrics


async def _now() -> datetime:
    return datetime.now(UTC)


async def _writes(request: Request) -> Writes:
    return request.app.state.writes


def _recording_tenant(scope_dependency: Callable[..., Principal]) -> Callable[..., Awaitable[Principal]]:
    """The caller of `scope_dependency`, with its tenant kept in the request state for the access log."""

    async def dependency(request: Request, principal: Annotated[Principal, Depends(scope_dependency)]) -> Principal:
        request.state.tenant = principal.tenant
        return principal

    return dependency


StoreDep = Annotated[Store, Depends(_store)]
SettingsDep = Annotated[Settings, Depends(_settings)]
MetricsDep = Annotated[Metrics, Depends(_metrics)]
Now = Annotated[datetime, Depends(_now)]
WritesDep = Annotated[Writes, Depends(_writes)]


@dataclass(frozen=True)
class Writing:
    """What a write route hands its job: the write pool, the store, the settings, the metrics, the time."""

    writes: Writes
    store: Store
    settings: Settings
    metrics: Metrics
    now: datetime


async def _writing(writes: WritesDep, store: StoreDep, settings: SettingsDep, metrics: MetricsDep, now: Now) -> Writing:
    return Writing(writes, store, settings, metrics, now)


WritingDep = Annotated[Writing, Depends(_writing)]
Ingest = Annotated[Principal, Depends(_recording_tenant(auth.ingest))]
Read = Annotated[Principal, Depends(_recording_tenant(auth.read))]
Admin = Annotated[Principal, Depends(_recording_tenant(auth.admin))]
