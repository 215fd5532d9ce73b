"""A session's records as run events for the diagnosis engine (SPEC §3.2 mapping, §3.1 shape).

| record         | run events                                                                  |
|----------------|-----------------------------------------------------------------------------|
| tool_result    | tool_call {tool, args}, then tool_output {tool, status: "ok" or "error",    |
|                | duration_ms, error: the record's `error` text when it failed}               |
| api_request    | token_usage {total_tokens: input_tokens + output_tokens, input_tokens,      |
|                | output_tokens, cache_read_tokens, cache_creation_tokens, cost_usd, model,   |
|                | duration_ms}                                                                |
| api_error      | error_event {error, status_code, message, attempt, duration_ms, model},     |
|                | fatal: true when it is the session's last record (SPEC §3.2, §4.2: the     |
|                | session ended in it), then retry_event {attempt} when attempt > 1           |
| anything else  | its bare name as the type (process_output when it has none), its attributes |
|                | as fields                                                                   |

Fields the record does not carry are left out. Counts, durations and status codes are integers;
`cost_usd` is the exact decimal as text ("0.031531"), never a binary float. Only `total_tokens` feeds the
diagnosis; the rest is kept for people and for the session score (SPEC §3.2).

`args` is the `tool_parameters` JSON object. When it is absent, blank or not a JSON object (unparsable
text, an array, a number), `args` is {"call": <the record's position in the session>} (SPEC §3.2, as
changed on 2026-11-23): arguments nobody knows never count as matching ones, so three `Read`s whose
parameters are unknown are not a loop. The position is the record's index (from 0) in the order below.

Names: the Claude Code names above are matched as Claude Code spells them (the session score of
`score.py` counts them the same way), after `make_record` has removed the `claude_code.` prefix; any
other name becomes the type through the diagnosis's own reader (`diagnosis.events.canonical_type`), so
a record named "ERROR_EVENT" is an `error_event`, as the diagnosis, the store and the execution outcome
read it.

Every event has `event_id` and, when the record has a time, `timestamp` (unix nanoseconds, a number).
Ids derive from the record's content (time, name, attributes), so the same record posted twice maps
to the same ids and the store can drop the copy; `<digest>:<n>` is the n-th event of the record, and
identical records within one call get `<digest>-2`, `<digest>-3`... Events are ordered by record time
(stable: input order among equal times; records without a time last).
"""

import hashlib
from collections import Counter
from collections.abc import Iterable
from typing import Any

import orjson

from service.diagnosis.events import DEFAULT_TYPE, RunEvent, canonical_type
from service.judge.otlp import LogRecord
from service.otlp.attributes import Attributes, AttributeValue
from service.otlp.values import as_decimal, as_int, is_true
from service.vocab import MESSAGE_CHARS

DIGEST_CHARS = 16
COUNTS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens", "duration_ms")
ERROR_COUNTS = ("status_code", "attempt", "duration_ms")


def to_run_events(records: Iterable[LogRecord]) -> list[RunEvent]:
    """The run events of one session's records, in the table's mapping."""
    ordered = sorted(records, key=lambda record: (record.time_unix_nano is None, record.time_unix_nano or 0))
    occurrences: Counter[str] = Counter()
    events: list[RunEvent] = []
    for position, record in enumerate(ordered):
        digest = _digest(record)
        occurrences[digest] += 1
        record_id = digest if occurrences[digest] == 1 else f"{digest}-{occurrences[digest]}"
        last = position == len(ordered) - 1
        for index, (event_type, fields) in enumerate(_mapped(record, position, last)):
            events.append(_event(event_type, fields, f"{record_id}:{index}", record.time_unix_nano))
    return events


def parse_tool_parameters(value: AttributeValue) -> dict[str, Any] | None:
    """A tool_result's `tool_parameters` as a JSON object (a kvlist attribute, or text holding a JSON
    object); None when it is absent, blank or anything else."""
    if isinstance(value, dict):
        return value
    if isinstance(value, str):
        try:
            parsed = orjson.loads(value)
        except orjson.JSONDecodeError:
            return None
        if isinstance(parsed, dict):
            return parsed
    return None


def tool_call_args(value: AttributeValue, position: int) -> dict[str, Any]:
    """A tool_call's `args`: the parsed `tool_parameters`, else {"call": position} (see the module docstring)."""
    parsed = parse_tool_parameters(value)
    return {"call": position} if parsed is None else parsed


def _mapped(record: LogRecord, position: int, last: bool) -> list[tuple[str, Attributes]]:
    name, attributes = record.event_name, record.attributes
    if name == "tool_result":
        tool = attributes.get("tool_name")
        succeeded = is_true(attributes.get("success"))
        args = tool_call_args(attributes.get("tool_parameters"), position)
        output = {"tool": tool, "status": "ok" if succeeded else "error", **_counts(attributes, ("duration_ms",))}
        if not succeeded:
            output |= _texts(attributes, ("error",))
        return [("tool_call", {"tool": tool, "args": args}), ("tool_output", output)]
    if name == "api_request":
        total = as_int(attributes.get("input_tokens")) + as_int(attributes.get("output_tokens"))
        return [("token_usage", {"total_tokens": total, **_counts(attributes, COUNTS), **_usage_texts(attributes)})]
    if name == "api_error":
        error = {**_texts(attributes, ("error", "message", "model")), **_counts(attributes, ERROR_COUNTS)}
        if last:
            error["fatal"] = True
        attempt = as_int(attributes.get("attempt"))
        return (
            [("error_event", error), ("retry_event", {"attempt": attempt})] if attempt > 1 else [("error_event", error)]
        )
    return [(canonical_type(name) if name else DEFAULT_TYPE, attributes)]


def _counts(attributes: Attributes, names: tuple[str, ...]) -> dict[str, int]:
    return {name: as_int(attributes[name]) for name in names if name in attributes}


def _texts(attributes: Attributes, names: tuple[str, ...]) -> dict[str, str]:
    return {name: str(attributes[name])[:MESSAGE_CHARS] for name in names if attributes.get(name) is not None}


def _usage_texts(attributes: Attributes) -> dict[str, str]:
    fields = _texts(attributes, ("model",))
    if "cost_usd" in attributes:
        fields["cost_usd"] = format(as_decimal(attributes["cost_usd"]), "f")
    return fields


def _event(event_type: str, fields: Attributes, event_id: str, time_unix_nano: int | None) -> RunEvent:
    event = {**fields, "event": event_type, "event_id": event_id}
    if time_unix_nano is not None:
        event["timestamp"] = time_unix_nano
    return event


def _digest(record: LogRecord) -> str:
    content = orjson.dumps([record.time_unix_nano, record.event_name, record.attributes], option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(content).hexdigest()[:DIGEST_CHARS]
