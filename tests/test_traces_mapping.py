"""A run's spans as a run (SPEC §3.4, §6): identity and context, events, execution errors, determinism."""

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.diagnosis import normalize_events
from service.traces import Span, SpanEvent, group_runs, map_run
from tests.traces_support import MS, T0, TRACE_A, TRACE_B, make_span

TOOL = "execute_tool"


def tool_span(number: int, tool: str = "search", arguments: Any = '{"q": "x"}', **fields: Any) -> Span:
    attributes = {"gen_ai.operation.name": TOOL, "gen_ai.tool.name": tool, "gen_ai.tool.call.arguments": arguments}
    return make_span(number, attributes=attributes | fields.pop("attributes", {}), **fields)


def hex_id(number: int) -> str:
    return number.to_bytes(8, "big").hex()


# --- identity and context -----------------------------------------------------------------------


def test_identity_is_agent_id_then_agent_name_then_service_name() -> None:
    service = {"service.name": "svc"}
    named = make_span(2, parent=1, attributes={"gen_ai.agent.name": "Planner"}, resource=service)
    with_id = make_span(3, parent=1, attributes={"gen_ai.agent.id": "agent-9"}, resource=service)
    root = make_span(1, resource=service)
    assert map_run("r", [root, named, with_id]).identity == "agent-9"
    assert map_run("r", [root, named]).identity == "Planner"
    assert map_run("r", [root]).identity == "svc"
    assert map_run("r", [make_span(1)]).identity is None


def test_identity_prefers_the_root_then_span_order() -> None:
    early = make_span(2, parent=1, start=T0, attributes={"gen_ai.agent.name": "early"})
    late = make_span(3, parent=1, start=T0 + 2 * MS, attributes={"gen_ai.agent.name": "late"})
    root = make_span(1, start=T0 + MS, attributes={"gen_ai.agent.name": "root"})
    assert map_run("r", [late, early, root]).identity == "root"
    assert map_run("r", [late, early]).identity == "early"


def test_suite_task_and_trial_come_from_span_or_resource_attributes() -> None:
    root = make_span(1, attributes={"repute.task_id": "task-3"}, resource={"repute.suite": "swe", "repute.trial": "2"})
    run = map_run("r", [root])
    assert (run.suite, run.task_id, run.trial) == ("swe", "task-3", 2)
    assert map_run("r", [make_span(1, attributes={"repute.trial": 0})]).trial == 0
    unreadable = map_run("r", [make_span(1, attributes={"repute.trial": "second", "repute.suite": ["x"]})])
    assert (unreadable.suite, unreadable.task_id, unreadable.trial) == (None, None, None)


# --- events -------------------------------------------------------------------------------------


def test_spans_are_ordered_by_start_then_end_then_span_id() -> None:
    spans = [
        tool_span(9, start=T0 + 2 * MS),
        tool_span(5, start=T0, end=T0 + 3 * MS),
        tool_span(7, start=T0, end=T0 + MS),
        tool_span(3, start=T0, end=T0 + 3 * MS),
    ]
    span_ids = [event["span_id"] for event in map_run("r", spans).events if event["event"] == "tool_call"]
    assert span_ids == [hex_id(7), hex_id(3), hex_id(5), hex_id(9)]


def test_execute_tool_gives_a_call_then_its_output() -> None:
    ok, failed = tool_span(1), tool_span(2, start=T0 + MS, error=True, message="no network")
    events = map_run("r", [failed, ok]).events
    common = {"event_id": hex_id(1), "span_id": hex_id(1), "timestamp": "2023-11-14T22:13:20.000Z"}
    assert events[:2] == [
        {"event": "tool_call", **common, "tool": "search", "args": {"q": "x"}},
        {"event": "tool_output", **common, "tool": "search", "status": "ok"},
    ]
    assert [(e["event"], e.get("status"), e.get("error")) for e in events[2:]] == [
        ("tool_call", None, None),
        ("tool_output", "error", None),
        ("error_event", None, "no network"),
    ]


@pytest.mark.parametrize(
    ("arguments", "args"),
    [
        ('{"path": "/tmp", "n": 2}', {"path": "/tmp", "n": 2}),
        ({"path": "/tmp"}, {"path": "/tmp"}),  # a kvlist value
        ("[1, 2]", {}),
        ("not json", {}),
        ("", {}),
        (7, {}),
        (None, {}),
        ('{"a": ' * 40 + "1" + "}" * 40, {}),  # nested deeper than attribute values may be
    ],
)
def test_tool_arguments_are_a_json_object_or_empty(arguments: Any, args: dict[str, Any]) -> None:
    assert map_run("r", [tool_span(1, arguments=arguments)]).events[0]["args"] == args


@pytest.mark.parametrize("operation", ["chat", "text_completion", "generate_content"])
@pytest.mark.parametrize(
    ("usage", "total"),
    [
        ({"gen_ai.usage.input_tokens": 1200, "gen_ai.usage.output_tokens": "300"}, 1500),
        ({"gen_ai.usage.prompt_tokens": 70, "gen_ai.usage.completion_tokens": 30}, 100),
        ({"gen_ai.usage.input_tokens": 5, "gen_ai.usage.prompt_tokens": 999, "gen_ai.usage.output_tokens": 1}, 6),
        ({"gen_ai.usage.output_tokens": 9.0}, 9),
        ({}, 0),
    ],
)
def test_model_calls_give_token_usage(operation: str, usage: dict[str, Any], total: int) -> None:
    run = map_run("r", [make_span(1, attributes={"gen_ai.operation.name": operation, **usage})])
    assert [(e["event"], e["total_tokens"]) for e in run.events] == [("token_usage", total)]


@pytest.mark.parametrize("operation", ["invoke_agent", "create_agent"])
def test_agent_operations_give_a_state_transition(operation: str) -> None:
    attributes = {"gen_ai.operation.name": operation, "gen_ai.agent.name": "Planner"}
    (event,) = map_run("r", [make_span(1, attributes=attributes)]).events
    assert (event["event"], event["agent"]) == ("state_transition", "Planner")


@pytest.mark.parametrize(
    "attributes",
    [{}, {"gen_ai.operation.name": "embeddings"}, {"gen_ai.operation.name": ["chat"]}, {"gen_ai.system": "openai"}],
)
def test_spans_that_are_not_agent_evidence_map_to_nothing(attributes: dict[str, Any]) -> None:
    assert map_run("r", [make_span(1, attributes=attributes)]).events == []


def test_an_error_span_gives_an_error_event_of_its_error_type_else_its_message() -> None:
    typed = make_span(1, error=True, message="rate limited", attributes={"error.type": "RateLimitError"})
    untyped = make_span(2, start=T0 + MS, error=True, message="rate limited")
    bare = make_span(3, start=T0 + 2 * MS, error=True)
    assert [(e["event"], e["error"]) for e in map_run("r", [typed, untyped, bare]).events] == [
        ("error_event", "RateLimitError"),
        ("error_event", "rate limited"),
        ("error_event", None),
    ]


def test_exception_span_events_give_error_events() -> None:
    span = make_span(
        1,
        attributes={"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 3},
        events=(
            SpanEvent("exception", {"exception.type": "TimeoutError", "exception.message": "slow"}),
            SpanEvent("retry", {}),
            SpanEvent("exception", {"exception.type": "ValueError"}),
        ),
    )
    assert [(e["event"], e.get("error")) for e in map_run("r", [span]).events] == [
        ("token_usage", None),
        ("error_event", "TimeoutError"),
        ("error_event", "ValueError"),
    ]


def test_events_are_valid_run_events_with_the_span_start_as_timestamp() -> None:
    span = tool_span(1, start=T0 + 1_234_567_891)
    events = map_run("r", [span]).events
    assert [event.timestamp_ms for event in normalize_events(events)] == [(T0 + 1_234_567_891) // MS] * 2
    assert events[0]["timestamp"] == "2023-11-14T22:13:21.234Z"


def test_resends_and_twins_collapse_to_one_span() -> None:
    span = tool_span(1)
    assert map_run("r", [span, span, tool_span(1)]).events == map_run("r", [span]).events


def test_differing_copies_of_a_span_collapse_the_same_way_whatever_their_order() -> None:
    first, second = tool_span(1, tool="a"), tool_span(1, tool="b")
    assert map_run("r", [first, second]) == map_run("r", [second, first])
    assert len(map_run("r", [first, second]).events) == 2


# --- execution errors (SPEC §6) -----------------------------------------------------------------


def staged_run(*spans: Span) -> dict[str, str] | None:
    return map_run("r", list(spans)).execution


def provider_failure(number: int, parent: int | None, **attributes: Any) -> Span:
    attributes = {"error.type": "provider_error", **attributes}
    return make_span(number, parent=parent, start=T0 + number * MS, error=True, message="503", attributes=attributes)


def test_a_known_reason_inside_a_staged_span_is_an_execution_error() -> None:
    stage = make_span(1, attributes={"repute.stage": "agent"})
    middle = make_span(2, parent=1)
    assert staged_run(stage, middle, provider_failure(3, parent=2)) == {
        "status": "execution_error",
        "stage": "agent",
        "reason": "provider_error",
        "message": "503",
    }


def test_the_error_span_may_carry_the_stage_itself_and_the_nearest_stage_wins() -> None:
    outer = make_span(1, attributes={"repute.stage": "setup"})
    inner = make_span(2, parent=1, attributes={"repute.stage": "evaluator"})
    assert staged_run(outer, provider_failure(3, parent=1, **{"repute.stage": "teardown"}))["stage"] == "teardown"
    assert staged_run(outer, inner, provider_failure(3, parent=2))["stage"] == "evaluator"
    unknown = make_span(2, parent=1, attributes={"repute.stage": "warmup"})
    assert staged_run(outer, unknown, provider_failure(3, parent=2))["stage"] == "setup"


def test_the_first_failing_span_names_the_execution_error() -> None:
    stage = make_span(1, attributes={"repute.stage": "repo_setup"})
    clone = make_span(2, parent=1, start=T0 + MS, error=True, attributes={"error.type": "clone_error"})
    later = provider_failure(3, parent=1)
    execution = staged_run(later, clone, stage)
    assert execution == {
        "status": "execution_error",
        "stage": "repo_setup",
        "reason": "clone_error",
        "message": "clone_error",
    }


@pytest.mark.parametrize(
    "spans",
    [
        [provider_failure(2, parent=1)],  # no stage anywhere (the parent has not arrived)
        [make_span(1, attributes={"repute.stage": "warmup"}), provider_failure(2, parent=1)],  # unknown stage
        [make_span(1, attributes={"repute.stage": "agent"}), provider_failure(2, parent=1, **{"error.type": "Boom"})],
        [make_span(1, attributes={"repute.stage": "agent", "error.type": "provider_error"})],  # not an ERROR span
        [make_span(1, resource={"repute.stage": "agent"}), provider_failure(2, parent=1)],  # a resource is no span
    ],
)
def test_other_errors_are_not_execution_errors(spans: list[Span]) -> None:
    assert staged_run(*spans) is None


def test_a_parent_cycle_ends_the_stage_search() -> None:
    loop_a = make_span(1, parent=2, error=True, attributes={"error.type": "provider_error"})
    loop_b = make_span(2, parent=1)
    assert staged_run(loop_a, loop_b) is None


# --- determinism --------------------------------------------------------------------------------

NUMBERS = st.integers(1, 6)
SPANS = st.builds(
    make_span,
    NUMBERS,
    trace_id=st.sampled_from([TRACE_A, TRACE_B]),
    parent=st.none() | NUMBERS,
    start=st.integers(T0, T0 + 3 * MS),
    end=st.none() | st.integers(T0, T0 + 3 * MS),
    attributes=st.fixed_dictionaries(
        {},
        optional={
            "gen_ai.operation.name": st.sampled_from(["execute_tool", "chat", "invoke_agent", "embeddings"]),
            "gen_ai.tool.name": st.sampled_from(["a", "b"]),
            "gen_ai.agent.name": st.sampled_from(["p", "q"]),
            "gen_ai.usage.input_tokens": st.integers(0, 10),
            "gen_ai.conversation.id": st.sampled_from(["c1", "c2"]),
            "error.type": st.sampled_from(["provider_error", "Boom"]),
            "repute.stage": st.sampled_from(["agent", "nope"]),
        },
    ),
    error=st.booleans(),
    events=st.lists(st.builds(SpanEvent, st.sampled_from(["exception", "log"]), st.just({}))).map(tuple),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(SPANS, max_size=12), st.randoms(use_true_random=False))
def test_runs_do_not_depend_on_span_arrival_order(spans: list[Span], shuffler: random.Random) -> None:
    shuffled = spans[:]
    shuffler.shuffle(shuffled)
    runs = {run_id: map_run(run_id, group) for run_id, group in group_runs(spans).items()}
    assert runs == {run_id: map_run(run_id, group) for run_id, group in group_runs(shuffled).items()}
    for run in runs.values():
        normalize_events(run.events)
