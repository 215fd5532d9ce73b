"""Properties of the diagnosis that hold for any run (hypothesis)."""

import copy
import hashlib
import random
import subprocess
import sys
from collections import Counter
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from service.diagnosis import diagnose, parse_run

TEXT = st.text(max_size=8)  # any characters: quotes, backslashes, surrogate-free unicode
SMALL = st.sampled_from(
    ["a", "false", "FALSE", "ignored", "Miss", "recall_failed", "lost", "mismatch", "compaction", "87%", "96"]
)
VALUE = st.one_of(st.none(), st.booleans(), st.integers(-5, 120), SMALL, TEXT)
ARGS: st.SearchStrategy[object] = st.one_of(
    st.just({}), st.none(), st.dictionaries(st.sampled_from(["k", "q"]), st.integers(0, 2), max_size=2)
)
# Ids that collide with each other, with defaults ("event_1") and with failure nodes.
EVENT_ID = st.sampled_from(["c0", "c0#2", "event_1", "failure_skill_failure", "failure_infinite_tool_loop", "x"])


@st.composite
def events(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from([
        "tool_call", "tool_call", "tool_call", "tool_output", "memory_event", "retry_event", "error_event",
        "context_event", "token_usage", "skill_event", "decision", "Tool_Call", "custom_kind",
    ]))  # fmt: skip
    event: dict[str, Any] = {draw(st.sampled_from(["event", "type"])): kind}
    if kind.lower() == "tool_call":
        event["tool"] = draw(st.sampled_from(["search", "fetch", None, 1]))
        event[draw(st.sampled_from(["args", "arguments"]))] = draw(ARGS)
    for field in draw(st.sets(st.sampled_from(
        ["used", "referenced", "status", "action", "invoked", "saturation", "saturation_score", "name", "skill"]
    ), max_size=3)):  # fmt: skip
        event[field] = draw(VALUE)
    if kind == "token_usage":
        event[draw(st.sampled_from(["total_tokens", "tokens", "input_tokens"]))] = draw(st.integers(0, 20_000))
    if draw(st.booleans()):
        event["event_id"] = draw(EVENT_ID)
    if draw(st.booleans()):
        event["note"] = draw(TEXT)
    return event


RUNS = st.lists(events(), max_size=40)


def _verdict(events: list[dict[str, Any]]) -> tuple[Any, ...]:
    d = diagnose(events)
    return d.trust_score, d.readiness_level, d.scores, [(c.type, c.severity, c.impact_score) for c in d.causes]


@settings(max_examples=150, deadline=None)
@given(RUNS)
def test_same_input_same_bytes_and_hash(run: list[dict[str, Any]]) -> None:
    first, second = diagnose(run), diagnose(copy.deepcopy(run))
    assert first.canonical_json() == second.canonical_json()
    assert first.diagnosis_hash == second.diagnosis_hash == first.to_dict()["diagnosis_hash"]


@settings(max_examples=150, deadline=None)
@given(RUNS)
def test_canonical_json_is_the_sorted_view_and_the_hash_covers_it(run: list[dict[str, Any]]) -> None:
    diagnosis = diagnose(run)
    view = diagnosis.to_dict()
    assert diagnosis.canonical_json() == orjson.dumps(view, option=orjson.OPT_SORT_KEYS)
    without_hash = {k: v for k, v in view.items() if k != "diagnosis_hash"}
    expected = hashlib.sha256(orjson.dumps(without_hash, option=orjson.OPT_SORT_KEYS)).hexdigest()
    assert diagnosis.diagnosis_hash == expected


@settings(max_examples=100, deadline=None)
@given(RUNS, st.randoms(use_true_random=False))
def test_key_order_inside_events_changes_nothing(run: list[dict[str, Any]], rng: random.Random) -> None:
    shuffled = []
    for event in run:
        items = list(event.items())
        rng.shuffle(items)
        shuffled.append(dict(items))
    assert diagnose(shuffled).canonical_json() == diagnose(run).canonical_json()


@settings(max_examples=150, deadline=None)
@given(RUNS, st.integers(0, 40), events().map(lambda e: {**e, "event": "never_heard_of_it"}))
def test_an_unknown_event_changes_no_score(run: list[dict[str, Any]], at: int, unknown: dict[str, Any]) -> None:
    unknown.pop("type", None)
    longer = [*run[:at], unknown, *run[at:]]
    assert _verdict(longer) == _verdict(run)


@settings(max_examples=200, deadline=None)
@given(RUNS)
def test_scores_stay_in_range(run: list[dict[str, Any]]) -> None:
    diagnosis = diagnose(run)
    assert 0 <= diagnosis.trust_score <= 100
    assert all(0 <= score <= 100 for score in diagnosis.scores.values())
    assert 0 <= diagnosis.cost_analysis["redundancy_score"] <= 100


@settings(max_examples=200, deadline=None)
@given(RUNS)
def test_graph_has_no_repeats_and_causes_end_at_failures(run: list[dict[str, Any]]) -> None:
    view = diagnose(run).to_dict()
    graph = view["causal_graph"]
    node_ids = [node["id"] for node in graph["nodes"]]
    edges = [(edge["from"], edge["to"], edge["type"]) for edge in graph["edges"]]
    assert len(node_ids) == len(set(node_ids)) == len(run) + len({c["type"] for c in view["failure_causes"]})
    assert not [edge for edge, count in Counter(edges).items() if count > 1]
    assert {a for a, _, _ in edges} | {b for _, b, _ in edges} <= set(node_ids)
    failure_nodes = {n["id"] for n in graph["nodes"] if n["type"] == "failure"}
    assert all(b in failure_nodes and b.startswith("failure_") for _, b, kind in edges if kind == "causes")
    assert sum(kind == "precedes" for _, _, kind in edges) == max(0, len(run) - 1)
    for cause in view["failure_causes"]:
        assert set(cause["evidence"]) <= set(node_ids) - failure_nodes


@settings(max_examples=100, deadline=None)
@given(RUNS)
def test_parsing_the_json_gives_the_same_diagnosis(run: list[dict[str, Any]]) -> None:
    parsed = parse_run(orjson.dumps({"identity": "a", "events": run}))
    assert diagnose(parsed.events).canonical_json() == diagnose(run).canonical_json()


def test_the_package_imports_nothing_of_the_service_around_it() -> None:
    code = (
        "import sys, service.diagnosis\n"
        "heavy = ('fastapi', 'starlette', 'clickhouse_connect', 'chdb', 'pydantic', 'typer', 'rich')\n"
        "print([m for m in sys.modules if m.split('.')[0] in heavy or m.startswith(('service.store', 'service.api'))])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
