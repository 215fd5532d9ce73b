"""Fleet degradation alerts firing now (SPEC §11), evaluated from the same SQL as the notifier."""

from datetime import datetime
from typing import Any, Literal

from fastapi import APIRouter
from pydantic import BaseModel

from service import alerts
from service.api.deps import Now, Read, SettingsDep, StoreDep
from service.api.routing import KeyFirstRoute

router = APIRouter(prefix="/v1", tags=["alerts"], route_class=KeyFirstRoute)


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
def list_alerts(principal: Read, store: StoreDep, settings: SettingsDep, now: Now) -> Any:
    return alerts.report(store, principal.tenant, settings, now)
