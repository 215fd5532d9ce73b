"""The FastAPI application: routers, auth, problem+json errors, body limit, metrics."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from service import __version__
from service.api import errors
from service.api.limits import BodyLimitMiddleware
from service.api.metrics import Metrics, MetricsMiddleware
from service.alerts.notifier import start_background_evaluator
from service.api.routers import alerts, health, keys, reputation, runs, sessions, suites, ui
from service.api.state import StoreHolder
from service.settings import Settings, get_settings
from service.store.client import Store

DESCRIPTION = """Deterministic diagnosis of agent runs and rolling 90-day reputation on ClickHouse.

Every endpoint but `/healthz` and `/readyz` needs `Authorization: Bearer <key>`. Errors are
`application/problem+json` and name the offending field."""


def create_app(settings: Settings | None = None, store: Store | None = None) -> FastAPI:
    """An app on the configured store, or on `store` when given (tests share one embedded store)."""
    settings = settings or get_settings()
    holder = StoreHolder(settings, store)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.alert_evaluator = start_background_evaluator(holder.get, settings)
        try:
            yield
        finally:
            if app.state.alert_evaluator is not None:
                app.state.alert_evaluator.stop()
            holder.close()

    app = FastAPI(title="Repute", version=__version__, description=DESCRIPTION, lifespan=lifespan)
    app.state.settings = settings
    app.state.store_holder = holder
    app.state.metrics = Metrics()
    errors.install(app)
    for module in (health, sessions, runs, reputation, suites, keys, alerts):
        app.include_router(module.router)
    ui.install(app)
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_body_bytes)
    app.add_middleware(MetricsMiddleware, metrics=app.state.metrics)
    return app
