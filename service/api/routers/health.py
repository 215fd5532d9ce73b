"""Liveness, readiness and Prometheus metrics."""

from typing import Any

from fastapi import APIRouter, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from service.api.deps import Admin, MetricsDep
from service.api.errors import Problem
from service.api.routing import KeyFirstRoute
from service.errors import StoreUnavailable
from service.services.health import pending_migrations
from service.services.keys import is_operator
from service.vocab import DEFAULT_TENANT

router = APIRouter(tags=["health"], route_class=KeyFirstRoute)


@router.get("/healthz", summary="Liveness (no key needed)")
def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get(
    "/readyz",
    summary="ClickHouse reachable and migrated (no key needed)",
    responses={
        503: {"description": "not ready: ClickHouse is unreachable or migrations are pending (the body says which)"}
    },
)
def readyz(request: Request, response: Response) -> dict[str, Any]:
    try:
        left = pending_migrations(request.app.state.store_holder.get())
    except StoreUnavailable as exc:
        response.status_code = 503
        return {"status": "unavailable", "detail": str(exc)}
    if left:
        response.status_code = 503
        return {"status": "migrations pending", "pending": left}
    return {"status": "ready"}


@router.get("/metrics", summary="Prometheus metrics (an admin key of the operator tenant `default`)")
def metrics(principal: Admin, metrics: MetricsDep) -> Response:
    if not is_operator(principal):  # the counters are every tenant's
        raise Problem(
            403,
            "Forbidden",
            f"the metrics cover every tenant: only admin keys of the operator tenant {DEFAULT_TENANT!r} read them",
        )
    return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)
