"""What the fleet and one identity's reputation say about its runs beside the score: an agent with six clean
runs and six execution errors scores what a clean one does (execution errors are not quality evidence), and
only its runs, execution errors and their share, unsafe verdicts, last run and top failure tell them apart.
The fleet's figures (summed per identity in sql/identities_list.sql) and one identity's (per day, in
sql/identity_activity.sql) agree; each sorts the fleet; the CLI prints them."""

from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from service.cli import app as cli
from service.store.client import Store
from service.store.reputation import refresh_scores
from tests.conftest import FIXTURES

FLAKY, CLEAN, UNSAFE = "agent-flaky", "agent-steady", "agent-reckless"


def _now_runs(fixture: str, identity: str, count: int) -> list[dict[str, Any]]:
    """The fixture's events without timestamps (so each run is at its finalize time), `count` runs of `identity`."""
    events = orjson.loads((FIXTURES / fixture).read_bytes())["events"]
    bare = [{k: v for k, v in event.items() if k != "timestamp"} for event in events]
    return [{"run_id": f"{identity}-{fixture[:-5]}-{n}", "identity": identity, "events": bare} for n in range(count)]


@pytest.fixture
def fleet_tenant(client, embedded_store: Store) -> dict[str, dict[str, Any]]:
    runs = (
        _now_runs("session_clean.json", FLAKY, 6) + _now_runs("session_infra_error.json", FLAKY, 6)
        + _now_runs("session_clean.json", CLEAN, 6)
        + _now_runs("session_clean.json", UNSAFE, 1) + _now_runs("session_loop.json", UNSAFE, 2)
    )  # fmt: skip
    assert client.post("/v1/sessions/batch", json=runs).status_code == 201
    refresh_scores(embedded_store)
    return {row["identity"]: row for row in client.get("/v1/identities").json()["identities"]}


def _last_run_at(client, identity: str) -> datetime:
    return max(
        datetime.fromisoformat(run["run_at"])
        for run in client.get("/v1/runs", params={"identity": identity}).json()["runs"]
    )


def test_a_flaky_agent_reads_apart_from_a_clean_one(client, fleet_tenant: dict[str, dict[str, Any]]) -> None:
    flaky, clean, unsafe = fleet_tenant[FLAKY], fleet_tenant[CLEAN], fleet_tenant[UNSAFE]
    assert flaky["overall"] == clean["overall"] == 100.0  # the score alone cannot tell them apart
    assert (flaky["runs"], flaky["execution_errors"], flaky["execution_error_share"]) == (12, 6, 0.5)
    assert (clean["runs"], clean["execution_errors"], clean["execution_error_share"]) == (6, 0, 0.0)
    assert (flaky["unsafe_runs"], clean["unsafe_runs"], unsafe["unsafe_runs"]) == (0, 0, 2)
    # The primary failure of most runs (SPEC §9, issue #38): each loop run's loop and cost causes tie at -30,
    # and the loop, the earlier cause, is its primary failure (before: the first name among the most counted).
    assert unsafe["top_failure"] == "infinite_tool_loop"
    assert flaky["top_failure"] is None and clean["top_failure"] is None
    for identity, row in fleet_tenant.items():
        assert datetime.fromisoformat(row["last_run_at"]) == _last_run_at(client, identity)
    today = datetime.now(UTC).date().isoformat()
    [day] = flaky["last_30_days"]
    assert day == {"day": today, "runs": 12, "execution_errors": 6, "unsafe_runs": 0, "mean_trust": 100.0}
    [day] = unsafe["last_30_days"]
    loop_trust = client.get(f"/v1/runs/{UNSAFE}-session_loop-0").json()["trust_score"]
    assert (day["runs"], day["unsafe_runs"]) == (3, 2) and abs(day["mean_trust"] - (100 + 2 * loop_trust) / 3) < 1e-6


def test_one_identitys_reputation_says_the_same(client, fleet_tenant: dict[str, dict[str, Any]]) -> None:
    fields = ("runs", "execution_errors", "execution_error_share", "unsafe_runs", "last_run_at", "top_failure")
    for identity, row in fleet_tenant.items():
        report = client.get(f"/v1/identities/{identity}/reputation").json()
        assert {name: report[name] for name in fields} == {name: row[name] for name in fields}, identity
    long_ago = (datetime.now(UTC) - timedelta(days=200)).date().isoformat()
    before = client.get(f"/v1/identities/{FLAKY}/reputation", params={"as_of": long_ago}).json()
    assert (before["runs"], before["execution_error_share"], before["last_run_at"]) == (0, None, None)


@pytest.mark.parametrize(
    ("sort", "descending", "first"),
    [("execution_error_share", True, FLAKY), ("execution_errors", True, FLAKY), ("unsafe_runs", True, UNSAFE),
     ("runs", True, FLAKY), ("runs", False, UNSAFE), ("last_run_at", True, None)],
)  # fmt: skip
def test_the_fleet_sorts_by_its_runs(client, fleet_tenant, sort: str, descending: bool, first: str | None) -> None:
    params = {"sort": sort, "order": "desc" if descending else "asc"}
    rows = client.get("/v1/identities", params=params).json()["identities"]
    values = [row[sort] for row in rows]
    assert values == sorted(values, reverse=descending) and len(rows) == 3
    assert first is None or rows[0]["identity"] == first, [(r["identity"], r[sort]) for r in rows]


def test_the_cli_prints_them(cli_as, tenant: str, fleet_tenant) -> None:
    cli_as(tenant)
    shown = CliRunner().invoke(cli, ["reputation", FLAKY])
    assert shown.exit_code == 0, shown.output
    assert "runs 12, execution errors 6 (50%), unsafe 0; last run " in shown.stdout
    listing = CliRunner().invoke(cli, ["fleet", "--sort", "execution_error_share", "--desc"])
    header, *lines = listing.stdout.splitlines()
    assert header.split("\t") == ["identity", "reputation", "confidence", "trend_7d", "runs", "execution_errors",
                                  "unsafe_runs", "top_failure", "last_run"]  # fmt: skip
    confidence = f"{fleet_tenant[FLAKY]['confidence']:.0%}"  # execution errors count for no confidence
    assert lines[0].split("\t")[:7] == [FLAKY, "100.0", confidence, "—", "12", "6 (50%)", "0"]
    as_json = orjson.loads(CliRunner().invoke(cli, ["fleet", "--json"]).stdout)
    assert {row["identity"] for row in as_json} == {FLAKY, CLEAN, UNSAFE}
