"""SPEC §6 end to end: runs posted through the API give the suite summary of the spec, character for
character, and execution errors never move reputation."""

import random

import httpx
import orjson

from service.testing.factory import make_session
from tests.conftest import FIXTURES
from tests.reputation_oracle import reputation_figures
from tests.test_outcome import SPEC_TEXT


def _run(task: str, trial: int, execution: dict) -> dict:
    session = make_session(random.Random(f"{task}/{trial}"), f"{task}-trial-{trial}", "agent-suite", 8)
    return {**session, "suite": "spec-example", "task_id": task, "trial": trial, "execution": execution}


def _spec_example() -> list[dict]:
    """10 tasks; scores of the 8 quality tasks average 0.75: 0.9, 0.95, 1.0, 0.85, 0.8 pass; 0.5, 0.6, 0.4 fail.
    Some tasks have several trials: any ok trial passes the task; the last trial of an error task names it."""
    error = {"status": "execution_error"}
    return [
        _run("t01", 1, {"score": 0.9}),
        _run("t02", 1, {"score": 0.95}),
        _run("t03", 1, {**error, "stage": "agent", "reason": "provider_error"}),
        _run("t03", 2, {"score": 1.0}),  # a retried infrastructure failure: the task passed
        _run("t04", 1, {"score": 0.85}),
        _run("t05", 1, {"score": 0.8}),
        _run("t06", 1, {"score": 0.5}),
        _run("t07", 1, {"score": 0.6}),
        _run("t08", 1, {"score": 0.3}),
        _run("t08", 2, {"score": 0.5}),  # mean of the two trials: 0.4
        _run("t09", 1, {**error, "stage": "agent", "reason": "script_error"}),
        _run("t09", 2, {**error, "stage": "setup", "reason": "template_error"}),
        _run("t10", 1, {**error, "stage": "agent", "reason": "provider_error"}),
    ]


def test_spec_summary_from_stored_runs(client: httpx.Client) -> None:
    posted = client.post("/v1/sessions/batch", content=orjson.dumps(_spec_example()))
    assert posted.status_code == 201, posted.text
    text = client.get("/v1/suites/spec-example/summary", params={"format": "text"})
    assert text.status_code == 200 and text.text == SPEC_TEXT + "\n"
    summary = client.get("/v1/suites/spec-example/summary").json()
    assert (summary["total"], summary["passed"], summary["execution_errors"]) == (10, 5, 2)
    assert abs(summary["mean_score"] - 0.75) < 1e-12
    errors = client.get("/v1/runs", params={"suite": "spec-example", "execution_status": "execution_error"}).json()
    assert sorted(r["run_id"] for r in errors["runs"]) == ["t03-trial-1", "t09-trial-1", "t09-trial-2", "t10-trial-1"]
    assert client.get("/v1/suites/no-such-suite/summary").status_code == 404


def test_execution_errors_never_move_reputation(client: httpx.Client) -> None:
    quality = [make_session(random.Random(i), f"q-{i}", "agent-steady", 20) for i in range(5)]
    assert client.post("/v1/sessions/batch", content=orjson.dumps(quality)).status_code == 201
    before = client.get("/v1/identities/agent-steady/reputation", params={"as_of": "2026-11-20"}).json()

    infra = orjson.loads((FIXTURES / "session_infra_error.json").read_bytes())
    infra["identity"] = "agent-steady"
    declared = {
        **make_session(random.Random(9), "declared", "agent-steady", 20),
        "execution": {"status": "execution_error", "stage": "evaluator", "reason": "evaluator_error"},
    }
    posted = client.post("/v1/sessions/batch", content=orjson.dumps([infra, declared])).json()["results"]
    assert [(r["execution_status"], r["failure_stage"], r["failure_reason_code"]) for r in posted] == [
        ("execution_error", "setup", "toolchain_missing"),
        ("execution_error", "evaluator", "evaluator_error"),
    ]
    stored = client.get("/v1/runs/run-infra-004").json()
    assert stored["score"] == 0.0 and stored["execution_status"] == "execution_error"
    after = client.get("/v1/identities/agent-steady/reputation", params={"as_of": "2026-11-20"}).json()
    assert reputation_figures(after) == reputation_figures(before)
    assert after["execution_errors"] == before["execution_errors"] + 2  # counted apart, beside the score
