"""`repute runs show ID`: one stored run for people (whose it is, its execution outcome, trust and why, the
primary failure with its causal chain, every cause with its evidence, its agents) or, with --json, as the
API gives it; a run that does not exist is one line and exit 1."""

import orjson
from typer.testing import CliRunner

from service.cli import app as cli
from tests.conftest import FIXTURES


def _show(*args: str):
    return CliRunner().invoke(cli, ["runs", "show", *args])


def _post(client, name: str, **changes: object) -> dict:
    run = {**orjson.loads((FIXTURES / name).read_bytes()), **changes}
    response = client.post("/v1/sessions", json=run)
    assert response.status_code == 201, response.text
    return response.json()


def test_a_run_shows_its_verdict_why_its_failures_and_their_evidence(cli_as, client, tenant: str) -> None:
    """Fails if a part is left out: the why (the readiness rule), the chain, a cause's evidence by id."""
    _post(client, "session_loop.json")
    cli_as(tenant)
    shown = _show("run-loop-002")
    assert shown.exit_code == 0, shown.output
    lines = shown.stdout.splitlines()
    assert lines[0] == "run run-loop-002 of agent-borealis"
    assert lines[1].startswith("  2026-11-20 10:00:00 to ") and lines[1].endswith("UTC, 10 events, finalized")
    assert lines[3:8] == [
        "outcome: quality_failure (score 0.900)",
        "trust 90/100  unsafe_for_production",
        "  why: critical causes: infinite_tool_loop, cost_explosion",
        "primary: infinite_tool_loop (critical, impact -30)",
        "  chain: tool_call -> tool_failure_or_no_progress -> retry_same_action -> loop_flagged",
    ]
    loop = 'tool_call http_get:{"url":"https://api.example/rates"}'
    assert f"    evidence: c0, c1, c2, c3, c4, c5 ({loop}); event_6, event_7, event_8 (retry_event)" in lines
    assert sum(line.startswith("    remediation: ") for line in lines) == 2
    assert lines[-1] == "agents: agent-borealis alone"


def test_json_is_the_apis_run(cli_as, client, tenant: str) -> None:
    _post(client, "session_multi.json")
    cli_as(tenant)
    shown = _show("run-multi-003", "--json")
    assert shown.exit_code == 0, shown.output
    assert orjson.loads(shown.stdout) == client.get("/v1/runs/run-multi-003").json()


def test_an_execution_error_shows_its_stage_and_reason_and_no_trust(cli_as, client, tenant: str) -> None:
    _post(client, "session_infra_error.json")
    cli_as(tenant)
    text = _show("run-infra-004").stdout
    assert "outcome: execution_error at stage setup, reason toolchain_missing\n" in text
    assert "  message: dotnet: command not found\n" in text
    assert "no trust verdict" in text and "trust 100/100" not in text and "primary:" not in text


def test_a_multi_agent_run_shows_its_agents_and_each_ones_verdict(cli_as, client, tenant: str) -> None:
    """Fails if the agent tree leaves out a child run, its verdict, or a child's parent."""
    _post(client, "session_clean.json", run_id="lead-1", identity="agent-lead")
    _post(client, "session_loop.json", run_id="lead-1:agent-helper", identity="agent-helper", parent_run_id="lead-1")
    _post(client, "session_infra_error.json", run_id="lead-1:agent-ops", identity="agent-ops", parent_run_id="lead-1")
    cli_as(tenant)
    lead = _show("lead-1").stdout.splitlines()
    tree = lead[lead.index("agents:") :]
    assert tree[1] == "  agent-lead  lead-1  trust 100 ready_for_runtime"
    assert sorted(tree[2:]) == [
        "  └ agent-helper  lead-1:agent-helper  trust 90 unsafe_for_production",
        "  └ agent-ops  lead-1:agent-ops  execution error",
    ]
    helper = _show("lead-1:agent-helper").stdout.splitlines()
    assert helper[-1] == "agents: agent-helper, one agent of run lead-1 (repute runs show it for all)"


def test_an_open_run_says_it_has_no_verdict_yet(cli_as, client, tenant: str) -> None:
    assert client.post("/v1/runs", json={"run_id": "still-going", "identity": "agent-slow"}).status_code == 201
    cli_as(tenant)
    shown = _show("still-going")
    assert shown.exit_code == 0, shown.output
    assert "open: no verdict until the run is finalized\n" in shown.stdout


def test_a_run_that_does_not_exist_is_one_line_and_exit_1(cli_as, tenant: str) -> None:
    cli_as(tenant)
    shown = _show("no-such-run")
    assert (shown.exit_code, shown.stdout, shown.stderr) == (1, "", "error: no run 'no-such-run'\n")
