"""A tenant's diagnosis profiles are bounded (issue #37): at most REPUTE_MAX_PROFILES_PER_TENANT profiles and
REPUTE_MAX_PROFILE_IDENTITIES_PER_TENANT identities and globs over all of them (422 naming the setting; a
refused definition writes nothing), and `GET /v1/profiles` answers them a page at a time."""

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from service.api.app import create_app
from service.services import profiles as profile_service
from service.services.keys import create_key
from service.settings import Settings
from service.store.client import Store
from service.testing.live import serve_in_thread

THRESHOLDS = {"tokens_high": 1000, "tokens_critical": 4000, "tokens_per_point": 500, "duplicates": 3}


@pytest.fixture(scope="module")
def capped_url(embedded_store: Store, data_dir: Path) -> Iterator[str]:
    settings = Settings(data_dir=data_dir, max_profiles_per_tenant=3, max_profile_identities_per_tenant=5)
    with serve_in_thread(create_app(settings, store=embedded_store)) as url:
        yield url


@pytest.fixture
def admin(capped_url: str, embedded_store: Store, tenant: str) -> Iterator[httpx.Client]:
    key = create_key(embedded_store, tenant, ["admin", "ingest", "read"], "caps", datetime.now(UTC)).key
    with httpx.Client(base_url=capped_url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as client:
        yield client


def _put(client: httpx.Client, name: str, identities: list[str]) -> httpx.Response:
    return client.put(f"/v1/profiles/{name}", json={**THRESHOLDS, "identities": identities})


def _refused(response: httpx.Response, field: str, setting: str) -> None:
    assert response.status_code == 422, response.text
    assert response.json()["errors"][0]["field"] == field and setting in response.json()["detail"], response.text


def test_a_tenants_profiles_and_the_identities_they_name_are_capped(admin: httpx.Client) -> None:
    """Broken on purpose: `_check_caps` counting the profile being redefined twice (a redefinition at the cap
    is refused) → this test fails."""
    assert _put(admin, "one", ["a*", "b*"]).status_code == 200
    assert _put(admin, "two", ["c"]).status_code == 200
    assert _put(admin, "three", []).status_code == 200
    _refused(_put(admin, "four", []), "name", "REPUTE_MAX_PROFILES_PER_TENANT")
    assert _put(admin, "one", ["a*", "b*", "d*"]).status_code == 200  # a redefinition is no new profile
    _refused(_put(admin, "two", ["c", "e", "f"]), "identities", "REPUTE_MAX_PROFILE_IDENTITIES_PER_TENANT")
    _refused(admin.put("/v1/profiles/critiqor", json={"identities": ["x", "y"]}), "identities", "IDENTITIES")
    assert admin.put("/v1/profiles/critiqor", json={"identities": ["x"]}).status_code == 200  # a built-in's rules
    listed = {profile["name"]: profile["identities"] for profile in admin.get("/v1/profiles").json()["profiles"]}
    assert listed == {
        "agent": [],
        "critiqor": ["x"],
        "long-session": [],
        "one": ["a*", "b*", "d*"],
        "three": [],
        "two": ["c"],
    }


def test_the_profiles_are_listed_a_page_at_a_time_with_every_rule(admin: httpx.Client) -> None:
    """Broken on purpose: the next page's offset `offset + limit` → `offset + limit - 1` (a profile listed
    twice), or no next cursor on a full page → this test fails."""
    for name in ("one", "three", "two"):
        assert _put(admin, name, [f"{name}-agent"]).status_code == 200
    names, rules, cursor = [], [], None
    while True:
        page = admin.get("/v1/profiles", params={"limit": 2, **({"cursor": cursor} if cursor else {})}).json()
        names += [profile["name"] for profile in page["profiles"]]
        rules.append(page["rules"])
        if (cursor := page["next_cursor"]) is None:
            break
    assert names == ["agent", "critiqor", "long-session", "one", "three", "two"]
    assert all(listed == rules[0] for listed in rules) and len(rules[0]) == 3 + 3  # three identities, three defaults
    assert admin.get("/v1/profiles", params={"cursor": "not-a-cursor"}).status_code == 422


def test_a_profile_set_unchanged_is_compiled_once(embedded_store: Store) -> None:
    """Resolving a run's profile costs a look-up, not a compile of the tenant's globs: the profiles are kept
    while the set stored is the same. Broken on purpose: `current` always making new TenantProfiles → this
    test fails."""
    tenant = f"t_{uuid.uuid4().hex[:12]}"
    settings = Settings(data_dir=Path("unused"))
    profile_service.define(embedded_store, tenant, "globbed", THRESHOLDS, None, ["g*"], [], datetime.now(UTC), settings)
    first = profile_service.current(embedded_store, tenant)
    assert profile_service.current(embedded_store, tenant) is first
    profile_service.define(embedded_store, tenant, "globbed", THRESHOLDS, None, ["h*"], [], datetime.now(UTC), settings)
    assert profile_service.current(embedded_store, tenant) is not first
    assert profile_service.current(embedded_store, tenant).resolve("h1", "session").name == "globbed"
