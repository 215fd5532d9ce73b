"""Spans grouped into runs (SPEC §3.4): by conversation id, else by trace; and the root's arrival."""

from service.traces import group_runs, root_arrived, run_key, trace_conversations
from tests.traces_support import MS, T0, TRACE_A, TRACE_B, make_span

A, B = TRACE_A.hex(), TRACE_B.hex()


def test_a_trace_without_conversation_id_is_a_run_keyed_by_its_trace_id() -> None:
    spans = [make_span(1), make_span(2, parent=1), make_span(3, trace_id=TRACE_B)]
    assert group_runs(spans) == {A: spans[:2], B: spans[2:]}


def test_spans_of_one_conversation_id_are_one_run_across_traces() -> None:
    turn_1 = [make_span(1, attributes={"gen_ai.conversation.id": "conv-7"}), make_span(2, parent=1)]
    turn_2 = [make_span(3, trace_id=TRACE_B, attributes={"gen_ai.conversation.id": "conv-7"})]
    assert group_runs([*turn_1, *turn_2]) == {"conv-7": [*turn_1, *turn_2]}


def test_a_span_naming_another_conversation_stays_in_its_traces_run() -> None:
    """As the receiver stores it (one trace, one run: Pydantic AI gives each agent its own conversation
    id). Keying a span by its own conversation first makes this fail, and `repute ingest` finalize a run
    the receiver never stored."""
    root = make_span(1, attributes={"gen_ai.conversation.id": "outer"})
    handoff = make_span(2, parent=1, attributes={"gen_ai.conversation.id": 42})
    child = make_span(3, parent=2)
    assert group_runs([child, handoff, root]) == {"outer": [child, handoff, root]}


def test_a_trace_takes_its_roots_conversation_before_its_earlier_spans() -> None:
    child = make_span(2, parent=1, start=T0, attributes={"gen_ai.conversation.id": "child-conv"})
    root = make_span(1, start=T0 + MS, attributes={"gen_ai.conversation.id": "root-conv"})
    other = make_span(3, parent=1, start=T0 + 2 * MS)
    assert trace_conversations([other, child, root]) == {A: "root-conv"}
    assert run_key(other, trace_conversations([other, child, root])) == "root-conv"
    assert run_key(other, {}) == A


def test_differing_copies_of_one_span_stay_in_one_run_whatever_the_order() -> None:
    # A resend that changed the span (here, its conversation id) must not split it across two runs,
    # nor let the arrival order pick the trace's conversation: the copy with the smaller content id rules.
    first = make_span(1, attributes={"gen_ai.conversation.id": "c1"})
    second = make_span(1, attributes={"gen_ai.conversation.id": "c2"})
    child = make_span(2, parent=1)
    one_way = group_runs([first, second, child])
    other_way = group_runs([child, second, first])
    assert len(one_way) == 1
    assert {key: sorted(spans, key=repr) for key, spans in one_way.items()} == {
        key: sorted(spans, key=repr) for key, spans in other_way.items()
    }


def test_empty_conversation_ids_do_not_count() -> None:
    assert group_runs([make_span(1, attributes={"gen_ai.conversation.id": ""})]).keys() == {A}


def test_the_root_arrives_with_the_span_without_parent() -> None:
    assert not root_arrived([make_span(2, parent=1), make_span(3, parent=2)])
    assert root_arrived([make_span(2, parent=1), make_span(1)])
    assert not root_arrived([])
