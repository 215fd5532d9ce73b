"""SPEC §7.1 through the API: the posting key is the source, admins set credibility (their own tenant's
keys only), credibility applies to every as_of at once, and an identity's reputation is explained."""

from datetime import UTC, datetime, timedelta

import httpx

NOW = datetime.now(UTC)
AS_OF = NOW.date().isoformat()
# Older than REPUTE_SIGNAL_MAX_AGE_DAYS (an admin's import): unchanged over the explanation's 7 days.
IMPORTED = (NOW - timedelta(days=10)).isoformat()


def _signal(identity: str, delta: float, n: int, **extra: object) -> dict[str, object]:
    """A signal 1 to 5 days old: within REPUTE_SIGNAL_MAX_AGE_DAYS, so an ingest key may post it."""
    at = NOW - timedelta(days=1 + n % 5)
    return {
        "identity": identity, "category": "economic", "event_type": "payment_completed" if delta > 0 else
        "payment_failed", "score_delta": delta, "timestamp": at.isoformat(), **extra,
    }  # fmt: skip


def _key_id(client: httpx.Client) -> str:
    return client.headers["Authorization"].removeprefix("Bearer ").split("_")[1]


def _overall(client: httpx.Client, identity: str, as_of: str = AS_OF) -> float | None:
    return client.get(f"/v1/identities/{identity}/reputation", params={"as_of": as_of}).json()["overall"]


def test_a_sources_credibility_applies_to_every_as_of_and_comes_back_exactly(make_client, tenant: str) -> None:
    admin, honest, liar = make_client(tenant), make_client(tenant, ("ingest",)), make_client(tenant, ("ingest",))
    honest.post("/v1/reputation-events", json=[_signal("agent-s", 1, n) for n in range(5)]).raise_for_status()
    answer = liar.post("/v1/reputation-events", json=[_signal("agent-s", -1, n, source="honest") for n in range(5)])
    assert answer.json()["accepted"] == 5 and answer.json()["capped"] == 0
    days = [(NOW + timedelta(days=offset)).date().isoformat() for offset in (0, -1, 36)]
    before = [_overall(admin, "agent-s", day) for day in days]
    assert before[0] == 50.0  # +1 and -1 in equal numbers: the client's "source" field was ignored

    put = admin.put(f"/v1/sources/{_key_id(liar)}", json={"credibility": 0})
    assert put.status_code == 200 and put.json()["credibility"] == 0
    assert [_overall(admin, "agent-s", day) for day in days] == [100.0, 100.0, 100.0]
    listed = {s["source"]: s["credibility"] for s in admin.get("/v1/sources").json()["sources"]}
    assert listed[_key_id(liar)] == 0 and listed[_key_id(honest)] == 1

    admin.put(f"/v1/sources/{_key_id(liar)}", json={"credibility": 1}).raise_for_status()
    assert [_overall(admin, "agent-s", day) for day in days] == before


def test_sources_need_admin_and_never_reach_another_tenant(make_client, tenant: str) -> None:
    reader = make_client(tenant, ("ingest", "read"))
    assert reader.get("/v1/sources").status_code == 403
    assert reader.put(f"/v1/sources/{_key_id(reader)}", json={"credibility": 0.5}).status_code == 403
    admin, stranger = make_client(tenant), make_client(f"{tenant}-other")
    assert admin.put(f"/v1/sources/{_key_id(stranger)}", json={"credibility": 0}).status_code == 404
    assert admin.put("/v1/sources/no-such-key", json={"credibility": 0}).status_code == 404
    bad = admin.put(f"/v1/sources/{_key_id(reader)}", json={"credibility": 2})
    assert bad.status_code == 422 and bad.json()["errors"][0]["field"] == "credibility"


def test_signals_over_the_daily_cap_are_stored_not_counted(make_client, tenant: str) -> None:
    client = make_client(tenant)
    flood = [_signal("agent-c", -1, 0, reference_id=f"ref-{n}") for n in range(105)]
    answer = client.post("/v1/reputation-events", json=flood).json()
    assert (answer["accepted"], answer["capped"], answer["duplicates"]) == (105, 5, 0)
    assert client.get("/v1/identities/agent-c/reputation", params={"as_of": AS_OF}).json()["events"] == 100


def test_backdated_signals_share_the_cap_of_their_day_of_arrival(make_client, tenant: str) -> None:
    """SPEC §7.1: the cap counts per UTC day of arrival. Fails with a cap per timestamp day (before issue
    #28): 150 signals over 30 days were 5 a day, none capped."""
    importer = make_client(tenant)  # an admin: may post signals of any age
    spread = [
        _signal("agent-b", 1, n, reference_id=f"ref-{n}", timestamp=(NOW - timedelta(days=n % 30)).isoformat())
        for n in range(150)
    ]
    answer = importer.post("/v1/reputation-events", json=spread).json()
    assert (answer["accepted"], answer["capped"]) == (150, 50)
    assert importer.get("/v1/identities/agent-b/reputation", params={"as_of": AS_OF}).json()["events"] == 100


def test_the_explanation_of_an_identity(make_client, tenant: str) -> None:
    client = make_client(tenant)
    signals = [
        _signal("agent-e", 1, n, reference_type="transaction", reference_id=f"tx-{n}", timestamp=IMPORTED)
        for n in range(3)
    ]
    client.post("/v1/reputation-events", json=signals).raise_for_status()
    explained = client.get("/v1/identities/agent-e/reputation/explain", params={"as_of": AS_OF})
    assert explained.status_code == 200, explained.text
    assert explained.json()["changes"] == {"economic": "payment_completed unchanged at 100.0"}
    references = explained.json()["top_references"]
    assert sorted(r["reference_id"] for r in references) == ["tx-0", "tx-1", "tx-2"]
    assert client.get("/v1/identities/nobody/reputation/explain").status_code == 404
    other = make_client(f"{tenant}-x")
    assert other.get("/v1/identities/agent-e/reputation/explain", params={"as_of": AS_OF}).status_code == 404


def test_the_cli_explains_a_reputation(cli_as, make_client, tenant: str) -> None:
    from typer.testing import CliRunner

    from service.cli import app as cli

    make_client(tenant).post(
        "/v1/reputation-events", json=[_signal("agent-x", -1, 1, reference_id="tx-9", timestamp=IMPORTED)]
    )
    cli_as(tenant)
    shown = CliRunner().invoke(cli, ["reputation", "agent-x", "--as-of", AS_OF, "--explain"])
    assert shown.exit_code == 0, shown.output
    assert "economic: payment_failed unchanged at 0.0" in shown.stdout and "tx-9" in shown.stdout
