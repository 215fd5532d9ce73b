"""The FastAPI application: routers, auth, problem+json errors, body limit, metrics."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from service import __version__
from service.alerts.notifier import start_background_evaluator
from service.api import docs, errors, otlp_http
from service.api.access_log import AccessLogMiddleware
from service.api.background import settle_timer, start_sweeper
from service.api.inflight import InFlight
from service.api.limits import BodyLimitMiddleware
from service.api.metrics import Metrics, MetricsMiddleware
from service.api.openapi import with_documented_errors
from service.api.paths import ControlCharacterGuard
from service.api.reads_first import ReadsFirstMiddleware
from service.api.routers import (
    alerts,
    health,
    keys,
    logs,
    profiles,
    reputation,
    runs,
    sessions,
    statements,
    status,
    suites,
    traces,
    ui,
)
from service.api.state import StoreHolder
from service.api.writes import Writes
from service.priority import switching_every
from service.services.keys import Principal
from service.settings import Settings, get_settings
from service.store.client import Store

DESCRIPTION = """Deterministic diagnosis of agent runs and rolling 90-day reputation on ClickHouse.

Every endpoint but `/healthz` and `/readyz` needs `Authorization: Bearer <key>`. Errors are
`application/problem+json` and name the offending field."""


def create_app(
    settings: Settings | None = None, store: Store | None = None, acting_as: Principal | None = None
) -> FastAPI:
    """An app on the configured store, or on `store` when given (tests share one embedded store).
    With `acting_as`, every request acts as that principal, without a key (the CLI's in-process client)."""
    settings = settings or get_settings()
    holder = StoreHolder(settings, store)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.alert_evaluator = start_background_evaluator(holder.get, settings)
        app.state.session_sweeper = start_sweeper(holder.get, settings, app.state.metrics, app.state.writes)
        app.state.settle_timer.start()
        try:
            with switching_every(settings.switch_interval_ms / 1000):
                yield
        finally:
            for worker in (app.state.alert_evaluator, app.state.session_sweeper, app.state.settle_timer):
                if worker is not None:
                    worker.stop()
            app.state.writes.stop()
            holder.close()

    app = FastAPI(
        title="Repute", version=__version__, description=DESCRIPTION, lifespan=lifespan, docs_url=None, redoc_url=None
    )
    app.state.settings = settings
    app.state.acting_as = acting_as
    app.state.store_holder = holder
    app.state.metrics = Metrics()
    # Each tenant runs at most `write_concurrency` writes at once, and one worker more is left for others.
    app.state.writes = Writes(workers=settings.write_concurrency + 1, per_tenant=settings.write_concurrency)
    app.state.inflight = InFlight(max(settings.max_tenant_bytes_in_flight, settings.max_body_bytes))
    app.state.posted_runs = sessions.posted_runs(holder, settings)
    app.state.settle_timer = settle_timer(holder.get, settings, app.state.metrics, app.state.writes)
    errors.install(app)
    for module in (
        health,
        status,
        sessions,
        runs,
        logs,
        traces,
        reputation,
        statements,
        profiles,
        suites,
        keys,
        alerts,
    ):
        app.include_router(module.router)
    ui.install(app)
    docs.install(app)
    app.openapi = with_documented_errors(app)  # type: ignore[method-assign]
    otlp_http.install(app)
    # The last added runs first: no route sees an unroutable path, and metrics and the access log
    # see every request.
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_body_bytes)
    app.add_middleware(ControlCharacterGuard)
    app.add_middleware(MetricsMiddleware, metrics=app.state.metrics)
    app.add_middleware(ReadsFirstMiddleware)
    app.add_middleware(AccessLogMiddleware)  # outermost: every response gets its request id, 413s too
    return app
