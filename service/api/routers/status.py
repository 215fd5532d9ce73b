"""GET /v1/status: is this service healthy, and what does it hold for the caller's tenant."""

from datetime import datetime
from typing import Any, Literal

from fastapi import APIRouter
from pydantic import BaseModel, Field

from service.api.deps import Read, StoreDep
from service.api.routing import KeyFirstRoute
from service.services.status import tenant_status

router = APIRouter(prefix="/v1", tags=["health"], route_class=KeyFirstRoute)


class StoreState(BaseModel):
    engine: Literal["embedded", "server"]
    reachable: bool


class Migrations(BaseModel):
    applied: int
    pending: list[str]


class Status(BaseModel):
    version: str
    tenant: str
    store: StoreState
    migrations: Migrations
    runs: int = Field(description="the tenant's runs, open and finalized")
    identities: int = Field(description="identities with runs")
    last_finalized_at: datetime | None


@router.get("/status", response_model=Status, summary="Store, migrations and what the tenant holds")
def status(principal: Read, store: StoreDep) -> Any:
    return tenant_status(store, principal.tenant)
