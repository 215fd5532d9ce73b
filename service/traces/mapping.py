"""A run's spans as a run (SPEC §3.4 mapping, §3.1 event shape, §6 execution errors).

| span (gen_ai.operation.name)             | run events                                              |
|------------------------------------------|---------------------------------------------------------|
| execute_tool                             | tool_call {tool, args}, then tool_output {tool, status} |
| chat, text_completion, generate_content  | token_usage {total_tokens: input + output}              |
| invoke_agent, create_agent               | state_transition {agent}                                |
| status ERROR (any operation, or none)    | then error_event {error: error.type, else the message}  |
| each span event named `exception`        | then error_event {error: exception.type}                |
| anything else                            | nothing: not agent evidence                             |

`args` is `gen_ai.tool.call.arguments` when it is a JSON object (as text or as a kvlist), else {}.
Every event carries `event_id` and `span_id` (both the span id: the events of one span share it, which
the diagnosis allows) and `timestamp`, the span's start as ISO 8601 UTC with milliseconds (an epoch
number would be read by magnitude, and early-1970 nanoseconds would pass for microseconds).

The rules apply as SPEC §3.4 writes them: a span that an SDK ended on an exception (status ERROR and
an `exception` event) gives two error_events.
"""

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import chain
from typing import Any

import orjson

from service.judge.events import RunEvent
from service.judge.otlp import MAX_VALUE_DEPTH, Attributes, AttributeValue

# A value as text: a non-empty string, or an integer (the logs' reading of session.id).
from service.judge.otlp import session_id_text as attribute_text
from service.judge.values import as_int
from service.traces import semconv
from service.traces.order import in_run_order, roots_first
from service.traces.spans import NANOS_PER_MS, Span
from service.vocab import KNOWN_REASON_CODES, STAGES, ExecutionStatus

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_CONTAINERS = (dict, list)
_INTEGER_TEXT = re.compile(r"[+-]?[0-9]{1,18}")


@dataclass(frozen=True)
class TraceRun:
    """A run built from spans: the run fields of SPEC §3.1 (None when no span says) and its events.
    `execution` is the §6 execution object when the spans show an execution error, else None."""

    run_id: str
    identity: str | None
    suite: str | None
    task_id: str | None
    trial: int | None
    events: list[RunEvent]
    execution: dict[str, str] | None


def map_run(run_id: str, spans: Iterable[Span]) -> TraceRun:
    """The run of `spans` (all the spans of one run, in any order, copies allowed)."""
    ordered = in_run_order(spans)
    ranked = roots_first(ordered)
    return TraceRun(
        run_id=run_id,
        identity=_identity(ranked),
        suite=_first_text(_context_values(ranked, semconv.SUITE)),
        task_id=_first_text(_context_values(ranked, semconv.TASK_ID)),
        trial=_trial(ranked),
        events=[event for span in ordered for event in _span_events(span)],
        execution=_execution_error(ordered),
    )


# --- run fields ------------------------------------------------------------------------------------


def _identity(ranked: list[Span]) -> str | None:
    """gen_ai.agent.id on any span, else gen_ai.agent.name, else the resource's service.name."""
    return _first_text(
        chain(
            _span_values(ranked, semconv.AGENT_ID),
            _span_values(ranked, semconv.AGENT_NAME),
            _resource_values(ranked, semconv.SERVICE_NAME),
        )
    )


def _trial(ranked: list[Span]) -> int | None:
    trials = map(_trial_number, _context_values(ranked, semconv.TRIAL))
    return next((trial for trial in trials if trial is not None), None)


def _span_values(spans: Iterable[Span], name: str) -> Iterator[AttributeValue]:
    return (span.attributes.get(name) for span in spans)


def _resource_values(spans: Iterable[Span], name: str) -> Iterator[AttributeValue]:
    return (span.resource_attributes.get(name) for span in spans)


def _context_values(spans: list[Span], name: str) -> Iterator[AttributeValue]:
    """A `repute.*` attribute from the spans, then from their resources."""
    return chain(_span_values(spans, name), _resource_values(spans, name))


def _first_text(values: Iterable[AttributeValue]) -> str | None:
    return next(filter(None, map(attribute_text, values)), None)


def _trial_number(value: AttributeValue) -> int | None:
    """An integer, or decimal text of one; anything else is absent. (0 is a trial number too.)"""
    if type(value) is int:
        return value
    if type(value) is str and _INTEGER_TEXT.fullmatch(value.strip()):
        return int(value)
    return None


# --- events ----------------------------------------------------------------------------------------


def _span_events(span: Span) -> list[RunEvent]:
    common = {"event_id": span.span_id, "span_id": span.span_id, "timestamp": _timestamp(span.start_unix_nano)}
    return [{"event": kind, **common, **fields} for kind, fields in chain(_operation_events(span), _error_events(span))]


def _operation_events(span: Span) -> list[tuple[str, dict[str, Any]]]:
    attributes = span.attributes
    operation = attributes.get(semconv.OPERATION_NAME)
    if type(operation) is not str:
        return []
    if operation == semconv.EXECUTE_TOOL:
        tool = attribute_text(attributes.get(semconv.TOOL_NAME))
        status = "error" if span.status_error else "ok"
        args = _tool_arguments(attributes.get(semconv.TOOL_CALL_ARGUMENTS))
        return [("tool_call", {"tool": tool, "args": args}), ("tool_output", {"tool": tool, "status": status})]
    if operation in semconv.MODEL_CALLS:
        tokens = _token_count(attributes, semconv.INPUT_TOKENS) + _token_count(attributes, semconv.OUTPUT_TOKENS)
        return [("token_usage", {"total_tokens": tokens})]
    if operation in semconv.AGENT_OPERATIONS:
        return [("state_transition", {"agent": attribute_text(attributes.get(semconv.AGENT_NAME))})]
    return []


def _error_events(span: Span) -> list[tuple[str, dict[str, Any]]]:
    errors = []
    if span.status_error:
        error = attribute_text(span.attributes.get(semconv.ERROR_TYPE)) or span.status_message or None
        errors.append(("error_event", {"error": error}))
    for event in span.events:
        if event.name == semconv.EXCEPTION_EVENT:
            errors.append(("error_event", {"error": attribute_text(event.attributes.get(semconv.EXCEPTION_TYPE))}))
    return errors


def _token_count(attributes: Attributes, names: tuple[str, ...]) -> int:
    """The first of `names` present (the current spelling, then the older one), as an integer."""
    return as_int(next((attributes[name] for name in names if name in attributes), None))


def _tool_arguments(value: AttributeValue) -> dict[str, Any]:
    """The arguments when they are a JSON object (text, or a kvlist already decoded), else {}. Nesting
    deeper than attribute values may go reads as {}: events must stay serialisable."""
    if type(value) is str:
        try:
            value = orjson.loads(value)
        except orjson.JSONDecodeError:
            return {}
    return value if type(value) is dict and _nesting_within(value, MAX_VALUE_DEPTH) else {}


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


# --- execution errors (SPEC §6) --------------------------------------------------------------------


def _execution_error(ordered: list[Span]) -> dict[str, str] | None:
    """The first ERROR span whose error.type is a known reason code, inside a stage: the span itself or
    its nearest ancestor carrying a known `repute.stage`."""
    by_id = {(span.trace_id, span.span_id): span for span in ordered}
    for span in ordered:
        reason = span.attributes.get(semconv.ERROR_TYPE)
        if not span.status_error or reason not in KNOWN_REASON_CODES:
            continue
        stage = _stage_of(span, by_id)
        if stage is not None:
            message = span.status_message or reason
            return {
                "status": ExecutionStatus.EXECUTION_ERROR.value,
                "stage": stage,
                "reason": reason,
                "message": message,
            }
    return None


def _stage_of(span: Span, by_id: dict[tuple[str, str], Span]) -> str | None:
    visited: set[str] = set()
    current: Span | None = span
    while current is not None and current.span_id not in visited:
        stage = current.attributes.get(semconv.STAGE)
        if stage in STAGES:
            return str(stage)
        visited.add(current.span_id)
        parent = current.parent_span_id
        current = by_id.get((current.trace_id, parent)) if parent is not None else None
    return None
