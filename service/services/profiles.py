"""A tenant's diagnosis profiles (SPEC §4.1): defined by its admins (PUT /v1/profiles/{name}), listed with
the rules in the order they are tried (GET /v1/profiles), and resolved for each run its finalize diagnoses
(service.profiles says in which order).

Every finalize needs the tenant's profiles, and reading them is a query of its own on the finalize's path,
so a finalize takes them from a cache that is at most FRESH_SECONDS old. A change made through this process
is in force for its next finalize; one made through another process sharing the store (`repute serve
--workers N` on a ClickHouse server) within FRESH_SECONDS. A run that names a profile this process has not
seen yet makes it read the profiles again before the name is refused.
"""

import threading
import time
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from service.diagnosis import BUILT_IN, FAILURE_TYPES, Profile
from service.diagnosis.built_in import EVERY_DETECTOR
from service.diagnosis.profiles import THRESHOLDS
from service.errors import FieldError
from service.profiles import DEFAULT_OF_INPUT, Placed, TenantProfiles, unknown_profile
from service.settings import Settings
from service.store import profiles as profile_store
from service.store.client import Store

FRESH_SECONDS = 5.0
_cached: dict[tuple[str, str, str], tuple[float, TenantProfiles]] = {}
_cache_lock = threading.Lock()


def _key(store: Store, tenant: str) -> tuple[str, str, str]:
    return store.dsn, store.database, tenant


def current(store: Store, tenant: str) -> TenantProfiles:
    """The tenant's profiles as stored now (a rebuild re-diagnoses under these); the ones in the cache when
    nothing changed, so their rules are compiled once per profile set, not at every read."""
    placed = tuple(profile_store.tenant_profiles(store, tenant))
    with _cache_lock:
        found = _cached.get(_key(store, tenant))
    profiles = found[1] if found is not None and found[1].placed == placed else TenantProfiles(placed)
    with _cache_lock:
        _cached[_key(store, tenant)] = (time.monotonic(), profiles)
    return profiles


def in_force(store: Store, tenant: str) -> TenantProfiles:
    """The tenant's profiles for a finalize: at most FRESH_SECONDS old."""
    with _cache_lock:
        found = _cached.get(_key(store, tenant))
    if found is not None and time.monotonic() - found[0] < FRESH_SECONDS:
        return found[1]
    return current(store, tenant)


def require_known(store: Store, tenant: str, names: Sequence[tuple[str, str]]) -> None:
    """Refuses a run naming a profile the tenant does not have: `names` are (name, field) pairs."""
    profiles = in_force(store, tenant)
    if all(profiles.named(name) for name, _ in names):
        return
    profiles = current(store, tenant)  # defined meanwhile through another process?
    for name, field in names:
        if profiles.named(name) is None:
            raise unknown_profile(name, field)


def listing(store: Store, tenant: str, offset: int, limit: int) -> tuple[dict[str, Any], int | None]:
    """A page of the profiles the tenant may use, built-in first, from `offset`, with every rule in the
    order they are tried (the caps on profiles and identities bound them); and the next page's offset."""
    profiles = current(store, tenant)
    placed = sorted(profiles.by_name.values(), key=lambda one: (not one.built_in, one.profile.name))
    page = placed[offset : offset + limit]
    following = offset + limit if offset + limit < len(placed) else None
    listed = {
        "profiles": [profile_view(one) for one in page],
        "rules": [{"kind": rule.kind, "match": rule.match, "profile": rule.profile} for rule in profiles.rules],
    }
    return listed, following


def profile_view(placed: Placed) -> dict[str, Any]:
    name = placed.profile.name
    return {
        **placed.profile.to_dict(),
        "identities": list(placed.identities),
        "inputs": list(placed.inputs),
        "built_in": placed.built_in,
        "default_for": [kind for kind, profile in DEFAULT_OF_INPUT.items() if profile.name == name],
    }


def define(
    store: Store,
    tenant: str,
    name: str,
    thresholds: dict[str, int | None],
    detectors: Sequence[str] | None,
    identities: Sequence[str],
    inputs: Sequence[str],
    now: datetime,
    settings: Settings,
) -> dict[str, Any]:
    """Defines (or redefines) a tenant profile and where it applies; for a built-in name, its rules only.
    Within the tenant's caps (`settings`): a 422 naming the setting beyond them."""
    profile = profile_of(name, thresholds, detectors)
    placed = Placed(profile, tuple(dict.fromkeys(identities)), tuple(dict.fromkeys(inputs)))
    _check_caps(current(store, tenant), placed, settings)
    profile_store.set_profile(store, tenant, placed, now)
    current(store, tenant)
    return profile_view(placed)


def _check_caps(profiles: TenantProfiles, placed: Placed, settings: Settings) -> None:
    """The tenant's own profiles and the identities they name, once `placed` replaces its name's."""
    name = placed.profile.name
    own = [one for one in profiles.placed if one.profile.name != name]
    if name not in BUILT_IN and len([one for one in own if not one.built_in]) + 1 > settings.max_profiles_per_tenant:
        raise FieldError(
            "name",
            f"the tenant has {settings.max_profiles_per_tenant} profiles, the limit: the setting"
            " REPUTE_MAX_PROFILES_PER_TENANT; redefine one, or raise it",
        )
    named = sum(len(one.identities) for one in own) + len(placed.identities)
    if named > settings.max_profile_identities_per_tenant:
        raise FieldError(
            "identities",
            f"the tenant's profiles would name {named} identities and globs, over the"
            f" {settings.max_profile_identities_per_tenant} of the setting REPUTE_MAX_PROFILE_IDENTITIES_PER_TENANT",
        )


def profile_of(name: str, thresholds: dict[str, int | None], detectors: Sequence[str] | None = None) -> Profile:
    """The profile a definition gives: a built-in's own (its thresholds and detectors cannot change), else
    all four thresholds and the detectors named (default: every one)."""
    chosen = None if detectors is None else detector_set(detectors)
    built_in = BUILT_IN.get(name)
    if built_in is not None:
        given_values = {**thresholds, "detectors": chosen}
        for field in (*THRESHOLDS, "detectors"):
            given, fixed = given_values.get(field), getattr(built_in, field)
            if given is not None and given != fixed:
                shown = ", ".join(sorted(fixed)) if field == "detectors" else fixed
                raise FieldError(
                    field, f"{name} is built in: its {field} is {shown}; define a profile of another name instead"
                )
        return built_in
    missing = [field for field in THRESHOLDS if thresholds.get(field) is None]
    if missing:
        raise FieldError(missing[0], f"{missing[0]} is required (only a built-in profile's may be left out)")
    values: dict[str, Any] = {field: thresholds[field] for field in THRESHOLDS}
    if values["tokens_critical"] < values["tokens_high"]:
        raise FieldError("tokens_critical", "tokens_critical must be at least tokens_high")
    return Profile(name, **values, detectors=EVERY_DETECTOR if chosen is None else chosen)


def detector_set(names: Sequence[str]) -> frozenset[str]:
    """The detectors a definition names, each a failure type of the registry (SPEC §4.1, §4.2)."""
    for index, name in enumerate(names):
        if name not in EVERY_DETECTOR:
            raise FieldError(
                f"detectors[{index}]", f"no detector {name!r}: the detectors are {', '.join(FAILURE_TYPES)}"
            )
    if not names:
        raise FieldError("detectors", "name at least one detector (leave detectors out for every one)")
    return frozenset(names)
