"""Liveness, readiness and Prometheus metrics."""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from service.api import auth
from service.keys import Principal
from service.store.client import StoreUnavailable
from service.store.migrate import pending

router = APIRouter(tags=["health"])


@router.get("/healthz", summary="Liveness (no key needed)")
def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/readyz", summary="ClickHouse reachable and migrated (no key needed)")
def readyz(request: Request, response: Response) -> dict[str, Any]:
    try:
        store = request.app.state.store_holder.get()
        store.client.query("SELECT 1")
        left = pending(store)
    except StoreUnavailable as exc:
        response.status_code = 503
        return {"status": "unavailable", "detail": str(exc)}
    if left:
        response.status_code = 503
        return {"status": "migrations pending", "pending": left}
    return {"status": "ready"}


@router.get("/metrics", summary="Prometheus metrics (admin key)")
def metrics(request: Request, principal: Annotated[Principal, Depends(auth.admin)]) -> Response:
    return Response(generate_latest(request.app.state.metrics.registry), media_type=CONTENT_TYPE_LATEST)
