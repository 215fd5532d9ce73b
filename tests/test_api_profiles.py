"""Diagnosis profiles through the live server (SPEC §4.1): defined per tenant by admins, placed by rules,
named by runs; each run's diagnosis records the profile that judged it (but `critiqor`, whose bytes are
Critiqor's), and another tenant neither sees nor is affected by a tenant's profiles. Since SPEC §4.2 a
profile names its detectors, and posted runs and traces are judged under `agent` unless a rule says
otherwise (the expectations below changed with it: `agent` where `critiqor` was the default)."""

import uuid
from typing import Any

import httpx
import orjson
import pytest
from typer.testing import CliRunner

from service.cli import app as cli
from service.diagnosis import DETECTORS, FAILURE_TYPES
from tests.conftest import FIXTURES
from tests.test_otlp_api import SENDERS, _fixture_lines

CODING = {"tokens_high": 100_000, "tokens_critical": 500_000, "tokens_per_point": 50_000, "duplicates": 4}
EVERY, SIX = sorted(FAILURE_TYPES), sorted(d.failure_type for d in DETECTORS)
CRITIQOR = {"name": "critiqor", "tokens_high": 12_000, "tokens_critical": 30_000, "tokens_per_point": 6_000,
            "duplicates": 3, "detectors": SIX}  # fmt: skip
AGENT = {**CRITIQOR, "name": "agent", "detectors": EVERY}
LONG_SESSION = {"name": "long-session", "tokens_high": 200_000, "tokens_critical": 1_000_000,
                "tokens_per_point": 100_000, "duplicates": 3, "detectors": EVERY}  # fmt: skip
BUILT_IN = ["agent", "critiqor", "long-session"]


def _session(identity: str, tokens: int = 17_680, **fields: Any) -> dict[str, Any]:
    """A clean run of five model requests and five distinct tool calls, `tokens` in all."""
    events: list[dict[str, Any]] = []
    for n in range(5):
        events.append({"event": "tool_call", "tool": "Read", "args": {"file": f"f{n}.py"}})
        events.append({"event": "token_usage", "total_tokens": tokens // 5})
    return {"run_id": f"run-{uuid.uuid4().hex[:12]}", "identity": identity, "events": events, **fields}


def _post(client: httpx.Client, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post("/v1/sessions", json=body)
    assert response.status_code == 201, response.text
    return response.json()


def _failures(posted: dict[str, Any]) -> list[str]:
    return [cause["type"] for cause in posted["diagnosis"]["failure_causes"]]


def _refused(response: httpx.Response, status: int, field: str) -> None:
    assert response.status_code == status, response.text
    assert response.json()["errors"][0]["field"] == field, response.text


def test_the_built_in_profiles_are_listed_with_their_defaults(client: httpx.Client) -> None:
    listed = client.get("/v1/profiles").json()
    assert listed["profiles"] == [
        {**AGENT, "identities": [], "inputs": [], "built_in": True, "default_for": ["session", "otlp_traces"]},
        {**CRITIQOR, "identities": [], "inputs": [], "built_in": True, "default_for": []},
        {**LONG_SESSION, "identities": [], "inputs": [], "built_in": True, "default_for": ["otlp_logs"]},
    ]
    assert listed["rules"] == [
        {"kind": "default", "match": "session", "profile": "agent"},
        {"kind": "default", "match": "otlp_logs", "profile": "long-session"},
        {"kind": "default", "match": "otlp_traces", "profile": "agent"},
    ]


def test_a_run_names_its_profile_and_its_diagnosis_records_it(client: httpx.Client) -> None:
    judged = _post(client, _session("agent-named"))
    assert _failures(judged) == ["cost_explosion"] and judged["diagnosis"]["profile"] == AGENT  # the default
    assert client.get(f"/v1/runs/{judged['run_id']}").json()["profile"] == AGENT
    parity = _post(client, _session("agent-named", profile="critiqor"))
    assert _failures(parity) == ["cost_explosion"] and "profile" not in parity["diagnosis"]  # critiqor's bytes
    assert client.get(f"/v1/runs/{parity['run_id']}").json()["profile"] == CRITIQOR

    named = _post(client, _session("agent-named", profile="long-session"))
    assert _failures(named) == [] and named["diagnosis"]["profile"] == LONG_SESSION
    assert client.get(f"/v1/runs/{named['run_id']}").json()["profile"] == LONG_SESSION

    _refused(client.post("/v1/sessions", json=_session("agent-named", profile="nope")), 422, "profile")
    batch = [_session("agent-named"), _session("agent-named", profile="nope")]
    _refused(client.post("/v1/sessions/batch", json=batch), 422, "sessions[1].profile")
    _refused(client.post("/v1/sessions", json=_session("agent-named", profile="bad name!")), 422, "profile")

    run_id = f"run-{uuid.uuid4().hex[:12]}"
    _refused(client.post("/v1/runs", json={"run_id": run_id, "identity": "agent-named", "profile": "nope"}), 422,
             "profile")  # fmt: skip
    assert client.get(f"/v1/runs/{run_id}").status_code == 404  # a refused run is not stored
    opened = client.post("/v1/runs", json={"run_id": run_id, "identity": "agent-named", "profile": "long-session"})
    assert opened.status_code == 201 and opened.json()["profile"] is None  # no diagnosis yet
    client.post(f"/v1/runs/{run_id}/events", json=_session("agent-named")["events"]).raise_for_status()
    finalized = client.post(f"/v1/runs/{run_id}/finalize").json()
    assert finalized["profile"] == LONG_SESSION and finalized["primary_failure"] is None


def test_a_run_posted_again_under_another_profile_is_a_conflict(client: httpx.Client) -> None:
    body = _session("agent-again")
    _post(client, body)
    _refused(client.post("/v1/sessions", json={**body, "profile": "long-session"}), 409, "profile")
    assert client.post("/v1/sessions", json=body).status_code == 200


def test_rules_place_profiles_for_runs_finalized_afterwards(make_client, tenant: str) -> None:
    admin, other = make_client(tenant), make_client(f"{tenant}-other")
    before = _post(admin, _session("claude-code-7"))
    defined = admin.put("/v1/profiles/coding", json={**CODING, "identities": ["claude-code*"]})
    assert defined.status_code == 200, defined.text
    assert defined.json() == {"name": "coding", **CODING, "detectors": EVERY, "identities": ["claude-code*"],
                              "inputs": [], "built_in": False, "default_for": []}  # fmt: skip

    after = _post(admin, _session("claude-code-7"))
    assert after["diagnosis"]["profile"] == {"name": "coding", **CODING, "detectors": EVERY}
    assert _failures(after) == []
    assert _failures(_post(admin, _session("travel-agent"))) == ["cost_explosion"]  # no rule for it
    assert admin.get(f"/v1/runs/{before['run_id']}").json()["diagnosis"] == before["diagnosis"]  # kept as judged

    # Another tenant neither sees the profile nor is judged under it, nor can it name it.
    assert [p["name"] for p in other.get("/v1/profiles").json()["profiles"]] == BUILT_IN
    assert _failures(_post(other, _session("claude-code-7"))) == ["cost_explosion"]
    _refused(other.post("/v1/sessions", json=_session("claude-code-7", profile="coding")), 422, "profile")

    listed = admin.get("/v1/profiles").json()
    assert [p["name"] for p in listed["profiles"]] == [*BUILT_IN, "coding"]
    assert listed["rules"][0] == {"kind": "glob", "match": "claude-code*", "profile": "coding"}


def test_otlp_log_sessions_are_judged_under_long_session_unless_a_rule_says_otherwise(make_client, tenant: str) -> None:
    default, ruled = make_client(tenant), make_client(f"{tenant}-ruled")
    ruled.put("/v1/profiles/critiqor", json={"inputs": ["otlp_logs"]}).raise_for_status()
    for client in (default, ruled):
        for line in _fixture_lines():
            body, headers = SENDERS["json"](line)
            assert client.post("/v1/logs", content=body, headers=headers).status_code == 200
    for session in ("sess-a1", "sess-b2"):
        judged = default.post(f"/v1/runs/{session}/finalize").json()
        assert judged["profile"] == LONG_SESSION and judged["primary_failure"] is None, session
        assert judged["readiness_level"] == "ready_for_runtime"
        strict = ruled.post(f"/v1/runs/{session}/finalize").json()
        assert strict["profile"] == CRITIQOR and strict["primary_failure"] == "cost_explosion", session


def test_a_built_in_profile_keeps_its_thresholds(client: httpx.Client) -> None:
    _refused(client.put("/v1/profiles/critiqor", json={"tokens_high": 5}), 422, "tokens_high")
    same = client.put("/v1/profiles/long-session", json={**LONG_SESSION, "name": None, "identities": ["cc-*"]})
    _refused(same, 422, "name")  # the name is the path's
    kept = client.put("/v1/profiles/long-session", json={"tokens_high": 200_000, "identities": ["cc-*"]})
    assert kept.status_code == 200 and kept.json() == {**LONG_SESSION, "identities": ["cc-*"], "inputs": [],
                                                        "built_in": True, "default_for": ["otlp_logs"]}  # fmt: skip
    assert _post(client, _session("cc-1"))["diagnosis"]["profile"] == LONG_SESSION


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/v1/profiles/tight", {**CODING, "tokens_high": None}, "tokens_high"),
        ("/v1/profiles/tight", {**CODING, "tokens_critical": 99_999}, "tokens_critical"),
        ("/v1/profiles/tight", {**CODING, "tokens_per_point": 0}, "tokens_per_point"),
        ("/v1/profiles/tight", {**CODING, "duplicates": "4"}, "duplicates"),
        ("/v1/profiles/tight", {**CODING, "identities": ["claude code"]}, "identities[0]"),
        ("/v1/profiles/tight", {**CODING, "inputs": ["grpc"]}, "inputs[0]"),
        ("/v1/profiles/tight", {**CODING, "color": "red"}, "color"),
        ("/v1/profiles/bad%20name", CODING, "path.name"),
    ],
)
def test_a_bad_profile_is_a_422_naming_the_field(client: httpx.Client, path: str, body: Any, field: str) -> None:
    _refused(client.put(path, json=body), 422, field)
    assert [p["name"] for p in client.get("/v1/profiles").json()["profiles"]] == BUILT_IN


def test_profiles_are_for_admins(make_client, tenant: str) -> None:
    worker = make_client(tenant, ("ingest", "read"))
    assert worker.get("/v1/profiles").status_code == 403
    assert worker.put("/v1/profiles/coding", json=CODING).status_code == 403
    assert make_client(tenant).get("/v1/profiles").json()["profiles"][-1]["name"] == "long-session"


def test_a_session_file_may_name_its_profile(client: httpx.Client) -> None:
    body = (
        (FIXTURES / "session_multi.json").read_bytes().replace(b'"events"', b'"profile": "long-session", "events"', 1)
    )
    posted = client.post("/v1/sessions", content=body)
    assert posted.status_code == 201 and posted.json()["diagnosis"]["profile"] == LONG_SESSION


def test_repute_profiles_list_set_and_rules(cli_as, tenant: str) -> None:
    runner = CliRunner()
    cli_as(tenant)
    defined = runner.invoke(cli, ["profiles", "set", "coding", "--tokens-high", "100000", "--tokens-critical",
                                  "500000", "--tokens-per-point", "50000", "--duplicates", "4", "--identity",
                                  "claude-code*", "--identity", "coder-7", "--input", "otlp_traces"])  # fmt: skip
    assert defined.exit_code == 0, defined.output
    assert defined.stdout == "coding: applies to claude-code*, coder-7, input otlp_traces\n"
    listed = runner.invoke(cli, ["profiles", "list"])
    assert listed.stdout.splitlines() == [
        "name\ttokens_high\ttokens_critical\ttokens_per_point\tduplicates\tdetectors\tapplies_to",
        "agent\t12000\t30000\t6000\t3\tall\tdefault for session, default for otlp_traces",
        f"critiqor\t12000\t30000\t6000\t3\t{', '.join(SIX)}\truns that name it",
        "long-session\t200000\t1000000\t100000\t3\tall\tdefault for otlp_logs",
        "coding\t100000\t500000\t50000\t4\tall\tclaude-code*, coder-7, input otlp_traces",
    ]
    rules = runner.invoke(cli, ["profiles", "rules"])
    assert rules.stdout.splitlines()[:4] == [
        "order\tkind\tmatch\tprofile", "1\tidentity\tcoder-7\tcoding", "2\tglob\tclaude-code*\tcoding",
        "3\tinput\totlp_traces\tcoding",
    ]  # fmt: skip
    which = runner.invoke(cli, ["profiles", "rules", "--identity", "travel-agent", "--input", "otlp_logs", "--json"])
    assert orjson.loads(which.stdout) == [{"kind": "default", "match": "otlp_logs", "profile": "long-session"}]
    assert runner.invoke(cli, ["profiles", "rules", "--identity", "x"]).exit_code == 2

    refused = runner.invoke(cli, ["profiles", "set", "critiqor", "--tokens-high", "5"])
    assert refused.exit_code == 2 and "tokens_high" in refused.stderr
    thresholds = ["--tokens-high", "9", "--tokens-critical", "9", "--tokens-per-point", "9", "--duplicates", "9"]
    quiet = runner.invoke(cli, ["profiles", "set", "quiet", *thresholds, "--detector", "unrecovered_error", "--json"])
    assert orjson.loads(quiet.stdout)["detectors"] == ["unrecovered_error"], quiet.output
    unknown = runner.invoke(cli, ["profiles", "set", "quiet", *thresholds, "--detector", "crashes"])
    assert unknown.exit_code == 2 and "crashes" in unknown.stderr
    cli_as(tenant, ("read",))
    assert runner.invoke(cli, ["profiles", "list"]).exit_code == 2
