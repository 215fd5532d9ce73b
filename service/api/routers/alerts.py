"""Fleet degradation alerts firing now (SPEC §11), evaluated from the same SQL as the notifier."""

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel

from service import alerts
from service.api import auth
from service.api.routing import OrjsonRoute
from service.keys import Principal

router = APIRouter(prefix="/v1", tags=["alerts"], route_class=OrjsonRoute)


class FiringAlert(BaseModel):
    alert: str
    severity: Literal["warning", "critical"]
    subject: str
    value: float
    baseline: float | None
    message: str


class AlertList(BaseModel):
    evaluated_at: datetime
    alerts: list[FiringAlert]


@router.get("/alerts", response_model=AlertList, summary="Fleet degradation alerts firing now")
def list_alerts(request: Request, principal: Annotated[Principal, Depends(auth.read)]) -> Any:
    store = request.app.state.store_holder.get()
    return alerts.report(store, principal.tenant, request.app.state.settings, datetime.now(UTC))
