"""Diagnosis profiles (SPEC §4.1): a tenant's thresholds for the diagnosis and where each applies (admin)."""

from typing import Any

from fastapi import APIRouter

from service.api.deps import Admin, Now, StoreDep
from service.api.routing import KeyFirstRoute
from service.api.schemas import ProfileBody, ProfileInfo, ProfileList
from service.ids import ProfileName
from service.services import profiles

router = APIRouter(prefix="/v1", tags=["profiles"], route_class=KeyFirstRoute)


@router.get("/profiles", response_model=ProfileList, summary="Diagnosis profiles and the rules that place them")
def list_profiles(principal: Admin, store: StoreDep) -> Any:
    return profiles.listing(store, principal.tenant)


@router.put("/profiles/{name}", response_model=ProfileInfo, summary="Define a diagnosis profile and where it applies")
def set_profile(name: ProfileName, body: ProfileBody, principal: Admin, store: StoreDep, now: Now) -> Any:
    """Runs finalized from now on are judged under it where its rules apply (SPEC §4.1); runs already
    finalized keep their verdict until `POST /v1/reputation/rebuild?rediagnose=true`."""
    return profiles.define(
        store, principal.tenant, name, body.thresholds(), body.detectors, body.identities, body.inputs, now
    )
