"""Diagnosis profiles (SPEC §4.1): a tenant's thresholds for the diagnosis and where each applies (admin)."""

from typing import Annotated, Any

from fastapi import APIRouter, Query

from service.api.deps import Admin, Now, SettingsDep, StoreDep
from service.api.routing import KeyFirstRoute
from service.api.schemas import ProfileBody, ProfileInfo, ProfileList
from service.ids import ProfileName
from service.services import profiles
from service.services.responses import position_cursor, position_of

PROFILES_CURSOR = "profiles"
MAX_PAGE = 200  # profiles a page: REPUTE_MAX_PROFILES_PER_TENANT's default and the built-in ones fit in one
router = APIRouter(prefix="/v1", tags=["profiles"], route_class=KeyFirstRoute)


@router.get("/profiles", response_model=ProfileList, summary="Diagnosis profiles and the rules that place them")
def list_profiles(
    principal: Admin,
    store: StoreDep,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = MAX_PAGE,
    cursor: Annotated[str | None, Query(max_length=1024)] = None,
) -> Any:
    """A page of the profiles (built-in first, then by name) and every rule, in the order they are tried."""
    listed, following = profiles.listing(store, principal.tenant, position_of(PROFILES_CURSOR, cursor), limit)
    return {**listed, "next_cursor": None if following is None else position_cursor(PROFILES_CURSOR, following)}


@router.put("/profiles/{name}", response_model=ProfileInfo, summary="Define a diagnosis profile and where it applies")
def set_profile(
    name: ProfileName, body: ProfileBody, principal: Admin, store: StoreDep, settings: SettingsDep, now: Now
) -> Any:
    """Runs finalized from now on are judged under it where its rules apply (SPEC §4.1); runs already
    finalized keep their verdict until `POST /v1/reputation/rebuild?rediagnose=true`."""
    return profiles.define(
        store, principal.tenant, name, body.thresholds(), body.detectors, body.identities, body.inputs, now, settings
    )
