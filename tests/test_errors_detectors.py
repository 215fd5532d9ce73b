"""Errors count (SPEC §4.2), in the engine and the mappings: `unrecovered_error` and `tool_failures` beside
Critiqor's six, their impacts taken off the trust score under every profile but `critiqor`; `fatal` where
SPEC §3.4 and §3.2 put it. Each test names the change that turns it red (tried by hand)."""

from typing import Any

import orjson
import pytest

from service.diagnosis import AGENT, CRITIQOR, FAILURE_TYPES, LONG_SESSION, Profile, diagnose, recorded_profile
from service.diagnosis.built_in import CRITIQOR_SIX, EVERY_DETECTOR
from service.diagnosis.report import text_report, unsafe_reason
from service.judge import to_run_events
from service.traces.agents import map_runs
from service.traces.mapping import map_run
from service.traces.spans import Span
from tests.judge_support import record
from tests.traces_support import MS, T0, make_span, span_id

CHAIN = "error_raised -> not_recovered -> run_aborted"
TOOL_CHAIN = "tool_called -> tool_failed -> task_unsupported"


def _causes(events: list[dict[str, Any]], profile: Profile = AGENT) -> list[tuple[str, str, int]]:
    return [(cause.type, cause.severity, cause.impact_score) for cause in diagnose(events, profile).causes]


def _calls(statuses: list[str]) -> list[dict[str, Any]]:
    """A tool call and its output per status, each with its own arguments (no loop, no duplicates)."""
    events = []
    for n, status in enumerate(statuses):
        events += [
            {"event": "tool_call", "tool": "fetch", "args": {"n": n}},
            {"event": "tool_output", "status": status},
        ]
    return events


CRASH = [*_calls(["ok"]), {"event": "decision"}, {"event": "error_event", "error": "ValueError", "fatal": True}]


# --- unrecovered_error ------------------------------------------------------------------------------------


def test_a_crash_reads_70_unsafe_under_agent_and_100_ready_under_critiqor() -> None:
    """Broken on purpose: AGENT without unrecovered_error among its detectors, or the trust adjustment dropped
    (trust_score summing the dimensions only: 100), or the impact moved to -29 -> this test fails."""
    judged = diagnose(CRASH, AGENT)
    assert (judged.trust_score, judged.readiness_level) == (70, "unsafe_for_production")
    assert _causes(CRASH) == [("unrecovered_error", "critical", -30)]
    assert judged.scores == dict.fromkeys(judged.scores, 100)  # no dimension: the trust score itself pays
    view = judged.to_dict()
    assert view["primary_diagnosis"] == {
        "root_cause_failure_type": "unrecovered_error", "causal_chain_explanation": CHAIN, "severity": "critical",
        "description": "The run ended in an error it did not recover from.",
    }  # fmt: skip
    assert [r["failure_type"] for r in view["recommendations"]] == ["unrecovered_error"]
    critiqor = diagnose(CRASH, CRITIQOR)
    assert (critiqor.trust_score, critiqor.readiness_level, critiqor.causes) == (100, "ready_for_runtime", ())
    assert critiqor.canonical_json() == diagnose(CRASH).canonical_json()  # no profile: critiqor, Critiqor's bytes


def test_the_evidence_is_the_three_events_before_the_first_fatal_error_then_the_fatal_errors() -> None:
    """Broken on purpose: EVENTS_BEFORE 2 or 4, the events before counted from position 1, or only the first
    fatal error as evidence -> this test fails."""
    events = [
        *_calls(["ok", "ok"]),
        {"event": "error_event", "error": "E1", "fatal": "TRUE", "event_id": "first"},
        {"event": "error_event", "error": "handled"},  # not fatal: not evidence
        {"event": "error_event", "error": "E2", "fatal": True, "event_id": "second"},
    ]
    [cause] = diagnose(events, AGENT).causes
    assert cause.evidence == ("event_1", "event_2", "event_3", "first", "second")
    graph = diagnose(events, AGENT).causal_graph
    assert {"id": "failure_unrecovered_error", "label": "unrecovered_error", "type": "failure"} in graph["nodes"]
    causes = [edge["from"] for edge in graph["edges"] if edge["to"] == "failure_unrecovered_error"]
    assert causes == list(cause.evidence)
    early = [{"event": "error_event", "fatal": True}, *_calls(["ok"])]
    assert diagnose(early, AGENT).causes[0].evidence == ("event_0",)  # nothing before it
    second = [{"event": "decision"}, {"event": "error_event", "fatal": True}]
    assert diagnose(second, AGENT).causes[0].evidence == ("event_0", "event_1")  # the one event before it


@pytest.mark.parametrize(
    ("error", "counts"),
    [
        ({"fatal": True}, True),
        ({"fatal": "true"}, True),
        ({"fatal": False}, False),
        ({"fatal": "false"}, False),
        ({"fatal": 1}, False),  # read by meaning: true, or the text "true"
        ({}, False),  # an error the run went past
        ({"fatal": True, "stage": "agent", "reason": "provider_error"}, False),  # staged: an execution error
        ({"fatal": True, "stage": "SETUP"}, False),
        ({"fatal": True, "stage": "lunch"}, True),  # not a stage of SPEC §6: an ordinary error
    ],
)
def test_which_error_events_are_unrecovered(error: dict[str, Any], counts: bool) -> None:
    """Broken on purpose: staged errors counted, or any truthy `fatal` taken -> this test fails."""
    events = [*_calls(["ok"]), {"event": "error_event", **error}]
    assert (_causes(events) == [("unrecovered_error", "critical", -30)]) == counts


def test_a_crash_ties_a_critical_loop_and_the_earlier_cause_is_primary() -> None:
    """Impacts tie at -30 (three calls and four retries: -min(30, 8 + 12 + 12)): the loop comes first in cause
    order (SPEC §4: ties go to the earlier cause); both take their points, one from loop_control and one from
    the trust score."""
    loop = [{"event": "tool_call", "tool": "search", "args": {"q": "x"}} for _ in range(3)]
    retries = [{"event": "retry_event"} for _ in range(4)]
    judged = diagnose([*loop, *retries, {"event": "error_event", "fatal": True}], AGENT)
    assert [cause.type for cause in judged.causes] == ["infinite_tool_loop", "unrecovered_error"]
    assert judged.primary_failure_type == "infinite_tool_loop"
    assert judged.trust_score == round(70 * 0.20 + 100 * 0.80) - 30 == 64


# --- tool_failures ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        (["error"], []),  # one failure is no pattern
        (["error", "ok", "ok"], []),
        (["error", "error", "ok", "ok", "ok"], []),  # 2 of 5: under half
        (["error", "error", "ok", "ok"], [("tool_failures", "high", -20)]),  # 2 of 4: half
        (["error", "ERROR", "ok"], [("tool_failures", "high", -20)]),
        (["error", "error"], [("tool_failures", "critical", -20)]),  # every one failed
        (["error"] * 3, [("tool_failures", "critical", -25)]),
        (["error"] * 20, [("tool_failures", "critical", -25)]),  # -min(25, 10 + 5 x 20)
    ],
)
def test_tool_failures_from_two_failed_outputs_that_are_at_least_half(
    statuses: list[str], expected: list[tuple[str, str, int]]
) -> None:
    """Broken on purpose: MIN_FAILED 3 or 1, "at least half" as "more than half", BASE_IMPACT 9, MAX_IMPACT
    26, or critical when half failed -> this test fails."""
    assert _causes(_calls(statuses)) == expected
    assert _causes(_calls(statuses), CRITIQOR) == []


def test_a_session_whose_tool_calls_all_failed_is_critical_and_unsafe() -> None:
    """Claude Code's failed tool results (success false) map to failed outputs with their error text; every
    call failed: tool_failures critical, trust 80 - 0 = 75 (-25), unsafe."""
    records = [record("user_prompt", 0)] + [
        record("tool_result", n, tool_name="Bash", success="false", error=f"exit {n}", tool_parameters=f'{{"n": {n}}}')
        for n in range(1, 4)
    ]
    events = to_run_events(records)
    outputs = [event for event in events if event["event"] == "tool_output"]
    assert [(o["status"], o["error"]) for o in outputs] == [
        ("error", "exit 1"),
        ("error", "exit 2"),
        ("error", "exit 3"),
    ]
    judged = diagnose(events, LONG_SESSION)
    assert _causes(events, LONG_SESSION) == [("tool_failures", "critical", -25)]
    assert (judged.trust_score, judged.readiness_level) == (75, "unsafe_for_production")
    [cause] = judged.causes
    assert cause.causal_chain == TOOL_CHAIN and len(cause.evidence) == 3
    assert judged.evidence_summary["tool_outputs"] == 3


def test_success_false_is_a_failure_too_and_evidence_stops_at_twelve() -> None:
    events = [{"event": "tool_output", "success": "false"}] * 15 + [{"event": "tool_output", "status": "ok"}]
    [cause] = diagnose(events, AGENT).causes
    assert (cause.type, cause.severity, cause.impact_score) == ("tool_failures", "high", -25)
    assert cause.evidence == tuple(f"event_{n}" for n in range(12))


# --- the trust score and the profiles ---------------------------------------------------------------------


def test_the_trust_score_is_the_weighted_score_plus_the_error_impacts() -> None:
    """Every detector firing: Critiqor's six take the run to 73, their floor; the crash and the failed tools
    take 55 more. (The clamp at 0 cannot be reached: 73 - 55 is the least a run can score.) Broken on
    purpose: the adjustment dropped, or the impacts of Critiqor's causes added too -> this test fails."""
    events = [
        *[{"event": "tool_call", "tool": "search", "args": {"q": "x"}} for _ in range(5)],
        *[{"event": "tool_output", "status": "error"} for _ in range(5)],
        *[{"event": "memory_event", "action": "lost"} for _ in range(4)],
        *[{"event": "tool_output", "used": False} for _ in range(3)],
        *[{"event": "context_event", "saturation": 99} for _ in range(4)],
        *[{"event": "skill_event", "invoked": False} for _ in range(3)],
        {"event": "token_usage", "total_tokens": 200_000},
        {"event": "error_event", "fatal": True},
    ]
    critiqor, agent = diagnose(events, CRITIQOR), diagnose(events, AGENT)
    assert critiqor.trust_score == 73  # the floor of Critiqor's six
    assert [c.type for c in agent.causes][-2:] == ["unrecovered_error", "tool_failures"]  # five of eight failed
    assert agent.trust_score == 73 - 30 - 25 == 18
    rigged = Profile("rigged", 12_000, 30_000, 6_000, 3, EVERY_DETECTOR)
    failing = [*_calls(["error"] * 5), {"event": "error_event", "fatal": True}]
    assert diagnose(failing, rigged).trust_score == 100 - 25 - 30 == 45


def test_a_profile_runs_the_detectors_it_names() -> None:
    """Broken on purpose: diagnose running every detector whatever the profile -> this test fails."""
    only_errors = Profile("errors-only", 12_000, 30_000, 6_000, 3, frozenset({"unrecovered_error"}))
    events = [*_calls(["error", "error"]), *CRASH]
    assert [c[0] for c in _causes(events)] == ["unrecovered_error", "tool_failures"]
    assert [c[0] for c in _causes(events, only_errors)] == ["unrecovered_error"]
    recorded = diagnose(events, only_errors).to_dict()["profile"]
    assert recorded == {
        "name": "errors-only", "tokens_high": 12_000, "tokens_critical": 30_000, "tokens_per_point": 6_000,
        "duplicates": 3, "detectors": ["unrecovered_error"],
    }  # fmt: skip
    assert recorded_profile(orjson.loads(diagnose(events, only_errors).canonical_json())) == only_errors


def test_the_built_in_profiles_and_what_a_stored_diagnosis_was_judged_under() -> None:
    assert CRITIQOR.detectors == CRITIQOR_SIX and len(CRITIQOR_SIX) == 6
    assert AGENT.detectors == LONG_SESSION.detectors == frozenset(FAILURE_TYPES) and len(FAILURE_TYPES) == 8
    assert (AGENT.tokens_high, AGENT.tokens_critical, AGENT.tokens_per_point, AGENT.duplicates) == (
        CRITIQOR.tokens_high, CRITIQOR.tokens_critical, CRITIQOR.tokens_per_point, CRITIQOR.duplicates,
    )  # fmt: skip
    assert recorded_profile({}) == CRITIQOR  # stored without a profile: critiqor
    before = {"name": "long-session", "tokens_high": 200_000, "tokens_critical": 1_000_000,
              "tokens_per_point": 100_000, "duplicates": 3}  # fmt: skip
    assert recorded_profile({"profile": before}).detectors == CRITIQOR_SIX  # recorded before SPEC §4.2


def test_the_text_report_says_why_a_run_of_high_trust_is_unsafe() -> None:
    """Broken on purpose: the reason line left out, or given for a run unsafe by its low trust -> fails."""
    lines = text_report(diagnose(CRASH, AGENT)).splitlines()
    assert lines[:2] == ["trust 70/100  unsafe_for_production", "  why: critical cause: unrecovered_error"]
    assert lines[-1].endswith("duplicate calls")  # agent runs every detector: none left out
    assert text_report(diagnose(CRASH)).splitlines()[-1].endswith("not detected: unrecovered_error, tool_failures")
    assert unsafe_reason(59, "unsafe_for_production", [("infinite_tool_loop", "critical")]) is None
    assert unsafe_reason(90, "review_recommended", [("skill_failure", "high")]) is None
    assert unsafe_reason(90, "unsafe_for_production", [("skill_failure", "high"), ("x", "critical")]) == (
        "unsafe at trust 90 because x is critical (a critical cause makes a run unsafe at any trust)"
    )


# --- fatal in the trace mapping (SPEC §3.4) -------------------------------------------------------------


def _agent(number: int, name: str, parent: int | None = None, error: bool = False, at: int = 0) -> Span:
    attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name}
    return make_span(number, parent=parent, start=T0 + at * MS, attributes=attributes, error=error, message="boom")


def _tool(number: int, parent: int, error: bool = False, at: int = 0) -> Span:
    attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup"}
    return make_span(number, parent=parent, start=T0 + at * MS, attributes=attributes, error=error)


def _errors(events: list[dict[str, Any]]) -> dict[str, bool]:
    """Each error_event's span number and whether it is fatal."""
    return {
        str(int(event["span_id"], 16)): event.get("fatal", False) for event in events if event["event"] == "error_event"
    }


def test_fatal_is_the_root_span_and_the_root_agents_outermost_agent_span() -> None:
    """A workflow root span, the agent's outermost span, a nested span of the same agent, a tool span: all
    ERROR. Broken on purpose: fatal on every error span, on the agent's innermost span, or never on the
    root span -> this test fails."""
    spans = [
        make_span(1, name="workflow", error=True),
        _agent(2, "planner", parent=1, error=True, at=1),
        _agent(3, "planner", parent=2, error=True, at=2),  # planner called again inside itself
        _tool(4, parent=3, error=True, at=3),
    ]
    assert _errors(map_run("r", spans).events) == {"1": True, "2": True, "3": False, "4": False}
    judged = diagnose(map_run("r", spans).events, AGENT)
    types = {node["id"]: node["type"] for node in judged.causal_graph["nodes"]}
    [cause] = judged.causes  # one failed tool of one: no tool_failures
    # The root's error is the run's first event (at the root span's start): nothing comes before it.
    assert [(node_id.split("#")[0], types[node_id]) for node_id in cause.evidence] == [
        (span_id(1).hex(), "error_event"),
        (span_id(2).hex(), "error_event"),
    ]


def test_fatal_in_a_child_run_is_each_outermost_span_of_its_identity() -> None:
    """The lead hands over to a helper twice; the helper's second invocation fails, so does a tool of the
    lead's, and a helper span nested in a third agent nested in the helper. The helper's run ends in its
    errors; the lead's does not (it went on). Broken on purpose: the child's agent spans judged as if in
    the root run (fatal only on the trace root), or ancestors of any identity counted -> this test fails."""
    spans = [
        _agent(1, "lead"),
        _agent(2, "helper", parent=1, at=1),
        _agent(3, "helper", parent=1, error=True, at=2),  # a second invocation: outermost too
        _tool(4, parent=1, error=True, at=3),  # the lead's tool: handled, the lead went on
        _agent(5, "critic", parent=3, at=4),
        _agent(6, "helper", parent=5, error=True, at=5),  # helper again, under the helper's own invocation
        _agent(7, "critic", parent=1, error=True, at=6),  # a second critic invocation, beside the first
    ]
    lead, *children = map_runs("r", spans)
    runs = {run.identity: run for run in children}
    assert _errors(lead.events) == {"4": False}
    assert _errors(runs["helper"].events) == {"3": True, "6": False}
    assert _errors(runs["critic"].events) == {"7": True}
    assert [c.type for c in diagnose(lead.events, AGENT).causes] == []


def test_a_staged_execution_error_is_never_fatal() -> None:
    """A provider outage on the root span inside a stage is infrastructure: the run is an execution error and
    the crash detector does not judge it. Broken on purpose: `_fatal` without the staged check -> fails."""
    stage = {"repute.stage": "agent", "error.type": "provider_error"}
    spans = [make_span(1, name="harness", attributes=stage, error=True), _agent(2, "worker", parent=1, at=1)]
    run = map_run("r", spans)
    assert run.execution is not None and run.execution["reason"] == "provider_error"
    assert _errors(run.events) == {"1": False}
    assert diagnose(run.events, AGENT).causes == ()


def test_nested_agents_each_of_its_own_identity_are_each_outermost() -> None:
    """A chain of agents, each a new identity and each failing: every one is its own run's outermost span."""
    spans = [_agent(n, f"a{n}", parent=n - 1 or None, error=True, at=n) for n in range(1, 6)]
    runs = map_runs("r", spans)
    assert [_errors(run.events) for run in runs] == [{str(n): True} for n in range(1, 6)]


# --- fatal in the Claude Code mapping (SPEC §3.2) ---------------------------------------------------------


def test_an_api_error_is_fatal_only_as_the_sessions_last_record() -> None:
    """Broken on purpose: fatal on every api_error, or on the first record -> this test fails."""
    ended = to_run_events([record("user_prompt", 0), record("api_error", 1, error="overloaded", attempt=1)])
    assert ended[-1] == {**ended[-1], "event": "error_event", "fatal": True}
    recovered = to_run_events([record("api_error", 1, error="overloaded"), record("api_request", 2, input_tokens=5)])
    assert "fatal" not in recovered[0]
    untimed_last = to_run_events([record("api_error", None, error="x"), record("user_prompt", 3)])
    assert [(event["event"], event.get("fatal")) for event in untimed_last] == [
        ("user_prompt", None),
        ("error_event", True),
    ]  # a record without a time comes last
    assert _causes(ended, LONG_SESSION) == [("unrecovered_error", "critical", -30)]
    ok = to_run_events([record("tool_result", 1, tool_name="Read", success=True, error="ignored")])
    assert "error" not in ok[1]  # a tool result that succeeded carries no error text
