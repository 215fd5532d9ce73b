"""Parity with Critiqor's published rules (SPEC §4): the 40 recorded runs, and the session fixtures with
values worked out by hand from the spec."""

from datetime import UTC, datetime
from typing import Any

import orjson
import pytest

from service.diagnosis import DETECTORS, diagnose, normalize_events, parse_run
from tests.conftest import FIXTURES

PARITY_ROWS = [orjson.loads(line) for line in (FIXTURES / "critiqor_parity.jsonl").read_bytes().splitlines()]
NO_FAILURE = "No OpenClaw failure mode was detected from runtime evidence."
LOOP_CHAIN = "tool_call -> tool_failure_or_no_progress -> retry_same_action -> loop_flagged"
SKILL_CHAIN = "skill_available -> skill_not_selected_or_failed -> generic_execution"


def _verdict(view: dict[str, Any]) -> dict[str, Any]:
    """The parts of a diagnosis the parity file records."""
    return {
        "trust_score": view["trust_score"],
        "readiness_level": view["readiness_level"],
        "scores": view["scores"],
        "primary": view["primary_diagnosis"]["root_cause_failure_type"],
        "causes": [{k: c[k] for k in ("type", "severity", "impact_score")} for c in view["failure_causes"]],
        "evidence_summary": view["evidence_summary"],
        "cost_analysis": view["cost_analysis"],
    }


def test_the_parity_file_has_40_runs() -> None:
    assert len(PARITY_ROWS) == 40


@pytest.mark.parametrize("row", PARITY_ROWS, ids=[row["id"] for row in PARITY_ROWS])
def test_parity_with_critiqor(row: dict[str, Any]) -> None:
    assert _verdict(diagnose(row["events"]).to_dict()) == row["expect"]


def _fixture(name: str) -> dict[str, Any]:
    run = parse_run((FIXTURES / name).read_bytes())
    return diagnose(run.events).to_dict()


def _causes(view: dict[str, Any]) -> list[tuple[str, str, int]]:
    return [(c["type"], c["severity"], c["impact_score"]) for c in view["failure_causes"]]


def _edge_count(view: dict[str, Any], kind: str) -> int:
    return sum(edge["type"] == kind for edge in view["causal_graph"]["edges"])


def test_clean_session() -> None:
    view = _fixture("session_clean.json")
    # One call, outputs used, memory only stored, 1200 tokens from the usage object: nothing fires.
    assert view["trust_score"] == 100
    assert view["readiness_level"] == "ready_for_runtime"
    assert view["scores"] == dict.fromkeys(
        ("loop_control", "memory_integrity", "tool_output_utilization", "context_health", "cost_efficiency",
         "skill_adherence"), 100)  # fmt: skip
    assert view["failure_causes"] == [] and view["recommendations"] == []
    assert view["primary_diagnosis"]["root_cause_failure_type"] is None
    assert view["primary_diagnosis"]["causal_chain_explanation"] == NO_FAILURE
    assert view["cost_analysis"] == {
        "total_tokens": 1200, "duplicate_calls": 0, "redundancy_score": 0, "token_waste": 0, "cost_efficiency": 100,
    }  # fmt: skip
    summary = view["evidence_summary"]
    assert summary["event_count"] == 8 and set(summary["event_counts"].values()) == {1}
    assert (summary["tool_calls"], summary["tool_outputs"], summary["memory_events"]) == (1, 1, 1)
    assert (summary["retries"], summary["errors"], summary["state_transitions"]) == (0, 0, 1)
    nodes = view["causal_graph"]["nodes"]
    assert [n["id"] for n in nodes] == [f"event_{i}" for i in range(8)]
    assert nodes[1]["label"] == 'search:{"q":"tariff code 8471"}' and nodes[0]["label"] == "process_start"
    assert _edge_count(view, "precedes") == 7 and len(view["causal_graph"]["edges"]) == 7


def test_loop_session() -> None:
    view = _fixture("session_loop.json")
    # Six identical calls and three retries: loop -min(30, 8 + 24 + 9) = -30, critical (>= 5 calls).
    # 31,000 tokens and 6 - 1 = 5 duplicates: cost -min(30, 10 + 20 + 5) = -30, critical (>= 30,000).
    # 70*.2 + 15 + 20 + 15 + 70*.15 + 15 = 89.5 -> 90; the tie on |impact| goes to the earlier cause.
    assert _causes(view) == [("infinite_tool_loop", "critical", -30), ("cost_explosion", "critical", -30)]
    assert view["trust_score"] == 90
    assert view["readiness_level"] == "unsafe_for_production"
    assert view["scores"]["loop_control"] == 70 and view["scores"]["cost_efficiency"] == 70
    loop, cost = view["failure_causes"]
    calls = ["c0", "c1", "c2", "c3", "c4", "c5"]
    assert loop["evidence"] == [*calls, "event_6", "event_7", "event_8"]
    assert cost["evidence"] == [*calls, "event_9"]
    assert loop["description"] == "Tool call repeated 6 times with matching arguments."
    assert loop["causal_chain"] == LOOP_CHAIN
    assert view["primary_diagnosis"] == {
        "root_cause_failure_type": "infinite_tool_loop",
        "causal_chain_explanation": LOOP_CHAIN,
        "severity": "critical",
        "description": loop["description"],
    }
    # redundancy round(500 / 6) = 83; waste min(31000, 1000*5 + 120*30) = 8600
    assert view["cost_analysis"] == {
        "total_tokens": 31000, "duplicate_calls": 5, "redundancy_score": 83, "token_waste": 8600, "cost_efficiency": 17,
    }  # fmt: skip
    graph = view["causal_graph"]
    assert len(graph["nodes"]) == 10 + 2
    assert _edge_count(view, "precedes") == 9
    assert _edge_count(view, "causes") == 9 + 7
    # loop: c0..c5, c5-e6, e6-e7, e7-e8 (8); cost adds only c5-e9 (its c0..c5 pairs are already there)
    assert _edge_count(view, "reinforces") == 9
    assert [r["failure_type"] for r in view["recommendations"]] == ["infinite_tool_loop", "cost_explosion"]


def test_multi_session() -> None:
    view = _fixture("session_multi.json")
    # memory n=2 -18 medium; ignored output (referenced false) n=1 -17 medium; context 91% n=1 -12 medium;
    # skill n=2 (invoked false, status mismatch) -20 high.
    assert _causes(view) == [
        ("memory_degradation", "medium", -18),
        ("ignoring_tool_outputs", "medium", -17),
        ("context_pollution", "medium", -12),
        ("skill_failure", "high", -20),
    ]
    # 20 + 82*.15 + 83*.2 + 88*.15 + 15 + 80*.15 = 89.1
    assert view["trust_score"] == 89
    assert view["readiness_level"] == "review_recommended"
    assert view["primary_diagnosis"]["root_cause_failure_type"] == "skill_failure"
    assert view["primary_diagnosis"]["causal_chain_explanation"] == SKILL_CHAIN
    assert [c["evidence"] for c in view["failure_causes"]] == [
        ["event_1", "event_2"], ["event_4"], ["event_0"], ["event_5", "event_6"],
    ]  # fmt: skip
    summary = view["evidence_summary"]
    assert (summary["event_count"], summary["tool_calls"], summary["memory_events"], summary["errors"]) == (8, 1, 2, 1)
    assert view["causal_graph"]["nodes"][3]["label"] == 'sql:{"query":"select 1"}'  # `arguments` as args
    assert len(view["causal_graph"]["nodes"]) == 8 + 4
    assert (_edge_count(view, "precedes"), _edge_count(view, "causes"), _edge_count(view, "reinforces")) == (7, 6, 2)
    assert view["executive_summary"]["primary_failure_type"] == "skill_failure"
    assert view["executive_summary"]["summary"].startswith("Trust 89/100, review recommended: 4 failure causes")


def test_infra_error_session_is_not_a_quality_failure() -> None:
    view = _fixture("session_infra_error.json")
    assert view["trust_score"] == 100 and view["failure_causes"] == []
    assert view["evidence_summary"]["errors"] == 1 and view["evidence_summary"]["event_count"] == 3


def test_fixture_timestamps_normalize_to_epoch_ms() -> None:
    run = parse_run((FIXTURES / "session_multi.json").read_bytes())
    events = normalize_events(run.events)
    start = int(datetime(2026, 11, 20, 11, 0, 0, tzinfo=UTC).timestamp() * 1000)
    assert [e.timestamp_ms for e in events] == [start + 1000 * i for i in range(8)]
    assert [e.type for e in events][:3] == ["context_event", "memory_event", "memory_event"]
    assert [e.event_id for e in events] == [f"event_{i}" for i in range(8)]
    assert run.identity == "agent-atlas" and run.suite == "customs-evals" and run.task_id == "t-02"


def test_the_registry_follows_the_spec_table() -> None:
    assert [(d.failure_type, d.dimension, d.weight) for d in DETECTORS] == [
        ("infinite_tool_loop", "loop_control", 0.20),
        ("memory_degradation", "memory_integrity", 0.15),
        ("ignoring_tool_outputs", "tool_output_utilization", 0.20),
        ("context_pollution", "context_health", 0.15),
        ("cost_explosion", "cost_efficiency", 0.15),
        ("skill_failure", "skill_adherence", 0.15),
    ]
