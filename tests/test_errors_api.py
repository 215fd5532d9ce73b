"""Errors count (SPEC §4.1, §4.2, issue #38) through the live server on the embedded store: recorded
telemetry of a crash is judged unsafe and counts against its agent; an error the agent got past changes
nothing; profiles name their detectors; a re-diagnosis applies the new detectors to runs stored before;
an agent that crashes half its runs ranks below a clean one and its own clean past; the top failure is the
primary failure of most runs. Each test names the change that turns it red (tried by hand)."""

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import orjson
import pytest
from typer.testing import CliRunner

from service.cli import app as cli
from service.reputation.activity import top_failure
from service.store import migrate as migrations
from service.store.client import Store
from service.store.reputation import identity_activity, refresh_scores
from service.traces.otlp_json import encode_json_traces
from tests.test_traces_real import FACTS, real_spans

JSON = {"Content-Type": "application/json"}
NOW = datetime.now(UTC).replace(microsecond=0)
ADK_CRASH = "agentevals__adk_tool_error_otlp.json"
HELM_404 = "agentevals__helm_agent_jaeger.json"


def _post_recording(client: httpx.Client, name: str) -> dict[str, Any]:
    """A recorded file's spans through POST /v1/traces (as OTLP/JSON), its run finalized and read back."""
    body = orjson.dumps(encode_json_traces(real_spans(name).spans))
    assert client.post("/v1/traces", content=body, headers=JSON).status_code == 200
    run_id = FACTS[name]["conversation_ids"][0]["value"]
    assert client.post(f"/v1/runs/{run_id}/finalize").status_code == 200
    return client.get(f"/v1/runs/{run_id}").json()


def _run_trust(client: httpx.Client, run: dict[str, Any]) -> float:
    """The run's run_trust delta, as the explanation of its agent's reputation on its day lists it."""
    day = run["run_at"][:10]
    explained = client.get(f"/v1/identities/{run['identity']}/reputation/explain", params={"as_of": day}).json()
    [reference] = [r for r in explained["top_references"] if r["reference_id"] == run["run_id"]]
    return reference["weighted_delta"]


def test_the_adk_tool_error_recording_is_a_crash_that_counts_against_its_agent(client: httpx.Client) -> None:
    """agentevals' ADK run whose tool raises ValueError and aborts (the tool, agent and workflow spans all
    ERROR) was "100, ready_for_runtime, ok". Broken on purpose: `agent` without unrecovered_error, the
    traces' default back to critiqor, or fatal never given to the root span and the agent span -> fails."""
    run = _post_recording(client, ADK_CRASH)
    diagnosis = run["diagnosis"]
    assert diagnosis["primary_diagnosis"]["root_cause_failure_type"] == "unrecovered_error"
    assert diagnosis["primary_diagnosis"]["severity"] == "critical"
    assert run["readiness_level"] == "unsafe_for_production" and run["trust_score"] <= 70
    assert run["execution_status"] == "quality_failure"
    assert run["profile"]["name"] == "agent" and "unrecovered_error" in run["profile"]["detectors"]
    assert _run_trust(client, run) == -1.0
    events = client.get(f"/v1/runs/{run['run_id']}/events").json()["events"]
    fatal = [e for e in events if e["type"] == "error_event" and e["data"].get("fatal")]
    assert len(fatal) == 2  # the workflow root span and the agent's own span; the tool's error is not fatal


def test_the_helm_recording_keeps_its_verdict_the_agent_got_past_its_404(client: httpx.Client) -> None:
    """kagent's helm agent got an HTTP 404 from a plain HTTP client span under it and went on: an error, not
    a crash. Broken on purpose: fatal on every ERROR span -> this test fails."""
    run = _post_recording(client, HELM_404)
    assert (run["trust_score"], run["readiness_level"], run["execution_status"]) == (100, "ready_for_runtime", "ok")
    assert run["diagnosis"]["evidence_summary"]["errors"] == 1 and run["diagnosis"]["failure_causes"] == []
    assert _run_trust(client, run) == 1.0


def _tool_calls(statuses: list[str], at: datetime) -> list[dict[str, Any]]:
    stamp = at.isoformat()
    events = []
    for n, status in enumerate(statuses):
        events.append({"event": "tool_call", "tool": "fetch", "args": {"n": n}, "timestamp": stamp})
        events.append({"event": "tool_output", "tool": "fetch", "status": status, "timestamp": stamp})
    return events


def test_a_posted_session_whose_tool_calls_all_failed_is_critical(client: httpx.Client) -> None:
    """Broken on purpose: the posted sessions' default back to critiqor -> this test fails."""
    body = {"run_id": "all-failed", "identity": "flaky-tools", "events": _tool_calls(["error"] * 3, NOW)}
    answer = client.post("/v1/sessions", json=body).json()
    causes = [(c["type"], c["severity"], c["impact_score"]) for c in answer["diagnosis"]["failure_causes"]]
    assert causes == [("tool_failures", "critical", -25)]
    assert answer["diagnosis"]["readiness_level"] == "unsafe_for_production"
    assert answer["diagnosis"]["profile"]["name"] == "agent"
    named = client.post("/v1/sessions", json={**body, "run_id": "all-failed-critiqor", "profile": "critiqor"}).json()
    assert named["diagnosis"]["failure_causes"] == [] and "profile" not in named["diagnosis"]  # parity, by name


# --- profiles and their detectors ---------------------------------------------------------------------------


def test_profiles_name_their_detectors(client: httpx.Client) -> None:
    """Broken on purpose: detector names not checked, or a built-in's detectors open to change -> fails."""
    listed = {p["name"]: p for p in client.get("/v1/profiles").json()["profiles"]}
    assert len(listed["critiqor"]["detectors"]) == 6 and "unrecovered_error" not in listed["critiqor"]["detectors"]
    assert len(listed["agent"]["detectors"]) == len(listed["long-session"]["detectors"]) == 8
    assert listed["agent"]["default_for"] == ["session", "otlp_traces"]

    thresholds = {"tokens_high": 12_000, "tokens_critical": 30_000, "tokens_per_point": 6_000, "duplicates": 3}
    refused = client.put("/v1/profiles/lenient", json={**thresholds, "detectors": ["tool_failures", "crashes"]})
    assert refused.status_code == 422 and "'crashes'" in refused.json()["detail"], refused.text
    assert refused.json()["errors"][0]["field"] == "detectors[1]"
    assert "lenient" not in {p["name"] for p in client.get("/v1/profiles").json()["profiles"]}  # nothing written
    assert client.put("/v1/profiles/lenient", json={**thresholds, "detectors": []}).status_code == 422
    built_in = client.put("/v1/profiles/critiqor", json={"detectors": ["unrecovered_error"]})
    assert built_in.status_code == 422 and built_in.json()["errors"][0]["field"] == "detectors"

    defined = client.put("/v1/profiles/lenient", json={**thresholds, "detectors": ["tool_failures"]}).json()
    assert defined["detectors"] == ["tool_failures"]
    everything = client.put("/v1/profiles/strict", json=thresholds).json()
    assert sorted(everything["detectors"]) == sorted(listed["agent"]["detectors"])  # default: every detector
    crash = [*_tool_calls(["ok"], NOW), {"event": "error_event", "fatal": True, "timestamp": NOW.isoformat()}]
    lenient = client.post("/v1/sessions", json={"identity": "x", "profile": "lenient", "events": crash}).json()
    assert (lenient["diagnosis"]["trust_score"], lenient["diagnosis"]["failure_causes"]) == (100, [])
    strict = client.post("/v1/sessions", json={"identity": "x", "profile": "strict", "events": crash}).json()
    assert strict["diagnosis"]["trust_score"] == 70


def test_a_rediagnosis_judges_runs_stored_under_critiqor_with_the_new_detectors(client: httpx.Client) -> None:
    """A tenant that judged its sessions under critiqor (a rule), then dropped the rule: its crash read 100
    and raised the agent's reputation; `rebuild --rediagnose` judges it again under agent: 70, unsafe, a
    run_trust of -1 and a failure.unrecovered_error. Broken on purpose: the rebuild resolving profiles
    without the new default -> this test fails."""
    assert client.put("/v1/profiles/critiqor", json={"inputs": ["session"]}).status_code == 200
    crash = [*_tool_calls(["ok"], NOW), {"event": "error_event", "fatal": True, "timestamp": NOW.isoformat()}]
    stored = client.post("/v1/sessions", json={"run_id": "old-crash", "identity": "crasher", "events": crash}).json()
    assert (stored["diagnosis"]["trust_score"], "profile" in stored["diagnosis"]) == (100, False)
    assert client.get("/v1/runs/old-crash").json()["profile"]["name"] == "critiqor"  # no profile recorded
    assert _run_trust(client, client.get("/v1/runs/old-crash").json()) == 1.0

    assert client.put("/v1/profiles/critiqor", json={"inputs": []}).status_code == 200
    report = client.post("/v1/reputation/rebuild", params={"rediagnose": "true"}).json()
    assert report["runs_rediagnosed"] == 1
    run = client.get("/v1/runs/old-crash").json()
    assert (run["trust_score"], run["readiness_level"], run["primary_failure"]) == (
        70, "unsafe_for_production", "unrecovered_error",
    )  # fmt: skip
    assert run["execution_status"] == "quality_failure" and _run_trust(client, run) == -1.0
    reputation = client.get("/v1/identities/crasher/reputation").json()
    assert reputation["failures"] == {"unrecovered_error": 1} and reputation["overall"] == 0.0
    assert client.post("/v1/reputation/rebuild", params={"rediagnose": "true"}).json()["runs_rediagnosed"] == 0


# --- reputation: a crashing agent ranks below ------------------------------------------------------------------


def _runs(identity: str, days_ago: list[int], crash: bool) -> list[dict[str, Any]]:
    runs = []
    for days in days_ago:
        at = NOW - timedelta(days=days)
        events = _tool_calls(["ok"], at)
        if crash:
            events.append({"event": "error_event", "error": "ValueError", "fatal": True, "timestamp": at.isoformat()})
        kind = "crash" if crash else "clean"
        runs.append({"run_id": f"{identity}-{kind}-{days}", "identity": identity, "events": events})
    return runs


CRASHY, STEADY = "agent-crashy", "agent-steady"
RECENT = list(range(1, 11))


@pytest.fixture
def crashing(client: httpx.Client, embedded_store: Store) -> dict[str, dict[str, Any]]:
    """CRASHY: ten clean runs 150 days ago; in the last ten days five clean runs and five crashes. STEADY:
    ten clean runs in the last ten days."""
    runs = (
        _runs(CRASHY, list(range(141, 151)), crash=False) + _runs(CRASHY, RECENT[::2], crash=False)
        + _runs(CRASHY, RECENT[1::2], crash=True) + _runs(STEADY, RECENT, crash=False)
    )  # fmt: skip
    assert client.post("/v1/sessions/batch", json=runs).status_code == 201
    refresh_scores(embedded_store)
    return {row["identity"]: row for row in client.get("/v1/identities").json()["identities"]}


def test_an_agent_that_crashes_half_its_runs_ranks_below_a_clean_one_and_its_clean_past(
    client: httpx.Client, crashing: dict[str, dict[str, Any]]
) -> None:
    """Under critiqor each crash read 100 and raised the score (CRASHY would be 100, level with STEADY).
    Broken on purpose: `agent` without unrecovered_error (a crash: 100, ready, +1) -> this test fails. (With
    the trust adjustment dropped the crash still reads unsafe, a critical cause, so its run_trust is -1.)"""
    crashy, steady = crashing[CRASHY], crashing[STEADY]
    assert (crashy["overall"], steady["overall"]) == (50.0, 100.0)  # five +1 and five -1: neutral
    worst_first = client.get("/v1/identities", params={"sort": "overall", "order": "asc"}).json()["identities"]
    assert [row["identity"] for row in worst_first] == [CRASHY, STEADY]
    earlier = (NOW - timedelta(days=100)).date().isoformat()
    past = client.get(f"/v1/identities/{CRASHY}/reputation", params={"as_of": earlier}).json()
    assert past["overall"] == 100.0 > crashy["overall"]
    assert (crashy["unsafe_runs"], crashy["top_failure"], steady["top_failure"]) == (5, "unrecovered_error", None)


def test_explain_names_the_crash_and_the_runs_that_moved_the_score(cli_as, tenant: str, crashing) -> None:
    """Broken on purpose: the explanation's references without their run's primary failure -> fails."""
    cli_as(tenant)
    shown = CliRunner().invoke(cli, ["reputation", CRASHY, "--explain"], terminal_width=200)
    assert shown.exit_code == 0, shown.output
    assert "failure.unrecovered_error" in shown.stdout
    rows = [line for line in shown.stdout.splitlines() if f"{CRASHY}-crash-" in line]
    assert len(rows) == 5 and all("unrecovered_error" in row and "-1.0" in row for row in rows), shown.stdout
    assert "How reputation is computed: docs/reputation.md" in shown.stdout
    plain = CliRunner().invoke(cli, ["reputation", CRASHY], terminal_width=200)
    assert "failure unrecovered_error: 5 (top failure: the primary failure of most runs)" in plain.stdout


# --- the top failure -------------------------------------------------------------------------------------------


def _session(run_id: str, identity: str, memory: int = 0, skills: int = 0, loop: int = 0) -> dict[str, Any]:
    """A run with `memory` lost recalls (-(8 + 5n)), `skills` skills not invoked (-(8 + 6n)) and a tool called
    `loop` times with the same arguments (-(8 + 4n))."""
    events = [{"event": "memory_event", "action": "lost"}] * memory + [
        {"event": "skill_event", "invoked": False}
    ] * skills
    events += [{"event": "tool_call", "tool": "search", "args": {"q": "same"}}] * loop
    return {"run_id": run_id, "identity": identity, "events": events}


def test_the_top_failure_is_the_primary_failure_of_most_runs(client: httpx.Client, embedded_store: Store) -> None:
    """PRIMARY: memory_degradation is found in all three runs, but skill_failure is the primary failure of two
    (the counted causes would say memory_degradation). HEAVIER: one run each; skill_failure's primary cause
    took 26 points, memory_degradation's 13 (the name would say memory). EVEN: one run each, 20 points each:
    the name decides. Broken on purpose: the top failure from all causes, ties by name before impact, or the
    impact map ignored -> this test fails."""
    runs = [
        _session("p1", "primary", memory=1, skills=3), _session("p2", "primary", memory=1, skills=3),
        _session("p3", "primary", memory=1),
        _session("h1", "heavier", memory=1), _session("h2", "heavier", skills=3),
        _session("e1", "even", skills=2), _session("e2", "even", loop=3),
    ]  # fmt: skip
    assert client.post("/v1/sessions/batch", json=runs).status_code == 201
    refresh_scores(embedded_store)
    fleet = {row["identity"]: row["top_failure"] for row in client.get("/v1/identities").json()["identities"]}
    expected = {"primary": "skill_failure", "heavier": "skill_failure", "even": "infinite_tool_loop"}
    assert fleet == expected
    for identity, top in expected.items():
        assert client.get(f"/v1/identities/{identity}/reputation").json()["top_failure"] == top
    assert client.get("/v1/identities/primary/reputation").json()["failures"] == {
        "memory_degradation": 3, "skill_failure": 2,
    }  # fmt: skip


def test_top_failure_ranks_by_runs_then_summed_impact_then_name() -> None:
    assert top_failure({}, {}) is None
    assert top_failure({"b": 2, "a": 1}, {"a": -90, "b": -10}) == "b"
    assert top_failure({"b": 1, "a": 1}, {"a": -10, "b": -20}) == "b"
    assert top_failure({"b": 1, "a": 1}, {"a": -20, "b": -20}) == "a"


def test_runs_stored_before_the_primary_impact_read_it_from_their_dimension(
    fresh_database: Store, tenant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run row written without primary_impact (before migrations 0021 and 0022) reads its primary cause's
    impact from its dimension score: 100 - 74 = 26 points of skill_adherence. Fails when 0022 fills
    identity_run_days with an impact of 0 for a run without stored causes."""
    store, every_migration = fresh_database, migrations.discover()
    monkeypatch.setattr(migrations, "discover", lambda *_args: [m for m in every_migration if m.version < 21])
    migrations.migrate(store)
    columns = ["tenant", "run_id", "version", "identity", "created_at", "run_at", "status", "execution_status",
               "primary_failure", "skill_adherence", "trust_score", "readiness"]  # fmt: skip
    row = [tenant, "legacy", 1, "legacy-agent", NOW, NOW, "finalized", "ok", "skill_failure", 74, 90, "review"]
    store.insert("runs", [row], column_names=columns)
    monkeypatch.setattr(migrations, "discover", lambda *_args: every_migration)
    migrations.migrate(store)
    window = identity_activity(store, tenant, "legacy-agent", NOW.date(), NOW.date())
    assert window is not None
    assert (window["primary_failures"], window["primary_impacts"]) == ({"skill_failure": 1}, {"skill_failure": -26})
