"""A run's spans as a run (SPEC §3.4 mapping, §3.1 event shape, §3.5 identity, §6 execution errors).

A span's role is the first that applies (semconv.py names the attributes of each convention):

| role        | when                                                              | run events                       |
|-------------|-------------------------------------------------------------------|----------------------------------|
| tool        | execute_tool, OpenInference TOOL, OpenLLMetry tool                | tool_call, then tool_output      |
| agent       | invoke_agent / create_agent, OpenInference AGENT, OpenLLMetry agent | state_transition {agent}       |
| LLM request | chat, text_completion, generate_content, call_llm, OpenInference  | token_usage, when its usage      |
|             | LLM, `llm.request.type`, or any span carrying token usage         | counts                           |

Then, on any span:
- token usage counts once: a span's usage counts only when no descendant span of the run carries usage
  (instrumentations nest: a framework's `call_llm` around an SDK's `openai.chat`, an agent span carrying
  its agent's total), and a counted span gives one `token_usage`;
- a span whose status is ERROR gives exactly one `error_event {error, message}`; an `exception` event on
  a span that did not fail was handled (a cancelled stream the SDK recovered from) and is no error;
- the error of a run's own outermost agent span (an agent span of the run's identity with no ancestor
  agent span of that identity), and in the root agent's run the error of the trace's root span, carries
  `fatal: true`: the agent itself ended in it (SPEC §3.4, §4.2). A staged execution error (SPEC §6) is
  infrastructure, not the agent: never fatal.

Every event carries `event_id` and `span_id` (both the span id: the events of one span share it, which
the diagnosis allows) and `timestamp`, the span's start as ISO 8601 UTC with milliseconds (an epoch
number would be read by magnitude, and early-1970 nanoseconds would pass for microseconds). A tool
span whose arguments are unknown gets `args: {"span": <span id>}`: unknown arguments never match.
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from itertools import chain
from typing import Any

import orjson

from service.diagnosis.events import RunEvent
from service.otlp.attributes import MAX_VALUE_DEPTH, Attributes, AttributeValue, attribute_text
from service.otlp.values import as_decimal, as_int
from service.priority import stepping
from service.traces import semconv
from service.traces.index import TraceIndex
from service.traces.order import roots_first, span_key, span_order
from service.traces.roles import AGENT, TOOL, Usage, agent_identity, first_text, usage_of
from service.traces.spans import NANOS_PER_MS, Span
from service.vocab import KNOWN_REASON_CODES, MESSAGE_CHARS, ExecutionStatus

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_NO_USAGE = Usage(None, None, 0)
_CONTAINERS = (dict, list)
_INTEGER_TEXT = re.compile(r"[+-]?[0-9]{1,18}")


@dataclass(frozen=True)
class TraceRun:
    """A run built from spans: the run fields of SPEC §3.1 (None when no span says), its events, and the
    times its spans cover. `execution` is the §6 execution object when the spans show an execution
    error, else None."""

    run_id: str
    identity: str | None
    suite: str | None
    task_id: str | None
    trial: int | None
    events: list[RunEvent]
    execution: dict[str, str] | None
    started_unix_nano: int | None
    ended_unix_nano: int | None
    parent_run_id: str | None = None


def map_run(run_id: str, spans: Iterable[Span]) -> TraceRun:
    """The run of `spans` (all the spans of one run, in any order, copies allowed) as one agent's: its
    root agent's. (`agents.map_runs` gives each agent of a multi-agent run its own.)"""
    index = TraceIndex(spans)
    return segment_run(run_id, index.ordered, index, [], index.root_identity)


def segment_run(
    run_id: str,
    own: list[Span],
    index: TraceIndex,
    handoffs: list[Span],
    identity: str | None,
    parent_run_id: str | None = None,
) -> TraceRun:
    """The run of one agent's spans `own` (in run order) among all the spans of its trace (`index`): its
    events, with a `state_transition` for each agent span in `handoffs` (work it handed over, SPEC §3.5);
    its harness context (`repute.*`) from its own spans, else from the trace's; its execution error, whose
    stage may be on an ancestor of another agent. Costs O(own + handoffs), the trace's part being indexed.
    The run of the root agent is the one without `parent_run_id`."""
    handed_over = {span_key(span) for span in handoffs}
    root_run = parent_run_id is None
    items = sorted([*own, *handoffs], key=span_order)
    ranked = roots_first(own)
    return TraceRun(
        run_id=run_id,
        identity=identity,
        suite=index.context(semconv.SUITE, ranked, attribute_text),
        task_id=index.context(semconv.TASK_ID, ranked, attribute_text),
        trial=index.context(semconv.TRIAL, ranked, _trial_number),
        events=[
            event
            for span in stepping(items)  # a trace's mapping is most of its finalize's Python: it steps aside
            for event in (_handoff(span) if span_key(span) in handed_over else own_events(span, index, root_run))
        ],
        execution=_execution_error(own, index),
        started_unix_nano=min((span.start_unix_nano for span in own), default=None),
        ended_unix_nano=max((span.end_unix_nano for span in own), default=None),
        parent_run_id=parent_run_id,
    )


def _handoff(span: Span) -> list[RunEvent]:
    """The state_transition an agent span is in the run that handed work over to it."""
    return [{"event": "state_transition", **_common(span), "agent": agent_identity(span)}]


# --- events ------------------------------------------------------------------------------------------


def own_events(span: Span, index: TraceIndex, root_run: bool) -> list[RunEvent]:
    """The run events of a span in its own agent's run (`root_run`: the root agent's)."""
    key = span_key(span)
    counted = key in index.counted_usage or key in index.silent_calls
    return span_events(span, index.role(span), counted, _fatal(span, index, root_run))


def span_events(span: Span, role: str | None, usage_counts: bool, fatal: bool = False) -> list[RunEvent]:
    """The run events of one span of `role`: its role's, its counted usage, its error (in that order);
    the error carries `fatal: true` when the run ended in it."""
    common = _common(span)
    events = _role_events(span, role)
    if usage_counts:
        events.append(("token_usage", _usage_fields(span)))
    if span.status_error:
        events.append(("error_event", {**_error_fields(span), "fatal": True} if fatal else _error_fields(span)))
    return [{"event": kind, **common, **fields} for kind, fields in events]


def _fatal(span: Span, index: TraceIndex, root_run: bool) -> bool:
    """Whether the run ended in this span's error: an error of the trace's root span in the root agent's
    run, or of one of the run's own outermost agent spans; never a staged execution error."""
    if not span.status_error or _staged(span, index) is not None:
        return False
    return (root_run and span.is_root) or (index.role(span) == AGENT and index.outermost_agent(span))


def _common(span: Span) -> dict[str, str]:
    return {"event_id": span.span_id, "span_id": span.span_id, "timestamp": _timestamp(span.start_unix_nano)}


def _role_events(span: Span, role: str | None) -> list[tuple[str, dict[str, Any]]]:
    if role == TOOL:
        tool = first_text(chain((span.attributes.get(name) for name in semconv.TOOL_NAMES), (span.name,)))
        call = {"tool": tool, "args": _tool_arguments(span)}
        call_id = span.attributes.get(semconv.TOOL_CALL_ID)
        call_id = attribute_text(call_id[0] if type(call_id) is list and call_id else call_id)
        if call_id is not None:
            call["call_id"] = call_id
        return [("tool_call", call), ("tool_output", {"tool": tool, "status": "error" if span.status_error else "ok"})]
    if role == AGENT:
        return [("state_transition", {"agent": agent_identity(span)})]
    return []


def _usage_fields(span: Span) -> dict[str, Any]:
    """A counted span's usage, or (a model call that records none) 0 tokens and its model."""
    attributes = span.attributes
    usage = usage_of(attributes) or _NO_USAGE
    fields: dict[str, Any] = {
        "total_tokens": usage.total_tokens,
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "model": first_text(attributes.get(name) for name in semconv.MODEL_NAMES),
        "provider": first_text(attributes.get(name) for name in semconv.PROVIDER_NAMES),
        "finish_reasons": _finish_reasons(attributes.get(semconv.FINISH_REASONS)),
        "cost_usd": _cost(attributes),
    }
    return {name: value for name, value in fields.items() if value is not None}


def _cost(attributes: Attributes) -> str | None:
    """The call's cost as exact decimal text (as Claude Code's token_usage gives it), when an attribute
    gives it (semconv.COST_TOTALS, COST_PAIRS)."""
    for name in semconv.COST_TOTALS:
        if name in attributes:
            return format(as_decimal(attributes[name]), "f")
    for pair in semconv.COST_PAIRS:
        if any(name in attributes for name in pair):
            return format(sum((as_decimal(attributes.get(name)) for name in pair), Decimal(0)), "f")
    return None


def _finish_reasons(value: AttributeValue) -> list[str] | None:
    if type(value) is str:
        return [value]
    if type(value) is list and value and all(type(item) is str for item in value):
        return value
    return None


def _error_fields(span: Span) -> dict[str, Any]:
    """`error`: error.type, else the last exception's type, else http_<status>, else "error";
    `message`: the status message, else that exception's message (absent when neither says)."""
    exception = next((event for event in reversed(span.events) if event.name == semconv.EXCEPTION_EVENT), None)
    exception_attributes = exception.attributes if exception is not None else {}
    status_code = next(
        (code for code in map(as_int, (span.attributes.get(name) for name in semconv.HTTP_STATUS_CODES)) if code),
        None,
    )
    error = first_text(
        (
            span.attributes.get(semconv.ERROR_TYPE),
            exception_attributes.get(semconv.EXCEPTION_TYPE),
            f"http_{status_code}" if status_code is not None else None,
        )
    )
    message = span.status_message or first_text((exception_attributes.get(semconv.EXCEPTION_MESSAGE),))
    fields: dict[str, Any] = {"error": error or "error"}
    if message:
        fields["message"] = message[:MESSAGE_CHARS]
    return fields


def _tool_arguments(span: Span) -> dict[str, Any]:
    """The first of semconv.TOOL_ARGUMENTS, then the `content` of the span's own `gen_ai.tool.message`
    events of role tool, that is a JSON object (as text, or a kvlist already decoded), a wrapper of
    positional and keyword arguments read as its `kwargs`; else {"span": <span id>}. Nesting deeper than
    attribute values may go does not count: events must stay serialisable."""
    messages = (
        event.attributes.get("content")
        for event in span.events
        if event.name == semconv.TOOL_MESSAGE_EVENT and event.attributes.get("role") == "tool"
    )
    for value in chain((span.attributes.get(name) for name in semconv.TOOL_ARGUMENTS), messages):
        if type(value) is str:
            try:
                value = orjson.loads(value)
            except orjson.JSONDecodeError:
                continue
        if type(value) is dict and _nesting_within(value, MAX_VALUE_DEPTH):
            return _unwrapped(value)
    return {"span": span.span_id}


def _unwrapped(arguments: dict[str, Any]) -> dict[str, Any]:
    """`kwargs` of a wrapper `{"args": [], "kwargs": {...}}` (and at most `sanitize_inputs_outputs`), as
    OpenLLMetry and smolagents record a call; any other object as it is."""
    kwargs = arguments.get("kwargs")
    wrapper = arguments.get("args") == [] and type(kwargs) is dict and arguments.keys() <= semconv.ARGUMENT_WRAPPER_KEYS
    return kwargs if wrapper else arguments  # type: ignore[return-value]


def _nesting_within(value: Any, limit: int) -> bool:
    """Whether containers nest at most `limit` levels (walked level by level, without recursion)."""
    level = [value]
    for _ in range(limit + 1):
        level = [
            child
            for node in level
            for child in (node.values() if type(node) is dict else node)
            if type(child) in _CONTAINERS
        ]
        if not level:
            return True
    return False


def _timestamp(unix_nano: int) -> str:
    moment = _EPOCH + timedelta(milliseconds=unix_nano // NANOS_PER_MS)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


# --- run fields -----------------------------------------------------------------------------------------


def _trial_number(value: AttributeValue) -> int | None:
    """An integer, or decimal text of one; anything else is absent. (0 is a trial number too.)"""
    if type(value) is int:
        return value
    if type(value) is str and _INTEGER_TEXT.fullmatch(value.strip()):
        return int(value)
    return None


# --- execution errors (SPEC §6) --------------------------------------------------------------------


def _execution_error(own: list[Span], index: TraceIndex) -> dict[str, str] | None:
    """The first ERROR span of `own` whose error.type is a known reason code, inside a stage: the span
    itself or its nearest ancestor in the trace carrying a known `repute.stage`."""
    for span in own:
        staged = _staged(span, index)
        if staged is not None:
            stage, reason = staged
            return {
                "status": ExecutionStatus.EXECUTION_ERROR.value,
                "stage": stage,
                "reason": reason,
                "message": span.status_message or reason,
            }
    return None


def _staged(span: Span, index: TraceIndex) -> tuple[str, str] | None:
    """(stage, reason) of an ERROR span that is an execution error: its error.type a known reason code,
    inside a stage (the span itself or its nearest ancestor carrying a known `repute.stage`); else None."""
    reason = span.attributes.get(semconv.ERROR_TYPE)
    if not span.status_error or reason not in KNOWN_REASON_CODES:
        return None
    stage = index.stage(span)
    return None if stage is None else (stage, str(reason))
