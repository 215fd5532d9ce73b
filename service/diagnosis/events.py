"""Run events normalized (SPEC §3.1): type, id and timestamp read the same way everywhere.

The store writes raw events with `normalize_events`; the diagnosis reads types and ids with the same
helpers, so both agree on what an event is.
"""

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

from service.diagnosis.errors import InputError
from service.diagnosis.values import token_count
from service.vocab import EARLIEST_MS, LATEST_MS, TIME_RULE

KNOWN_TYPES = (
    "tool_call", "tool_output", "memory_event", "retry_event", "error_event", "state_transition", "decision",
    "skill_event", "token_usage", "context_event", "process_output", "process_start", "process_end",
)  # fmt: skip
DEFAULT_TYPE = "process_output"
TOKEN_USAGE = "token_usage"
# The canonical spellings, each mapped to itself: a hit here is exactly what `canonical_type` answers,
# so a hot loop may look a type up here first and call `canonical_type` only on a miss.
CANONICAL_TYPES: Mapping[str, str] = {name: name for name in KNOWN_TYPES}

# Epoch numbers are told apart by magnitude: below 10^11 they are seconds (until the year 5138), below
# 10^14 milliseconds, below 10^17 microseconds, below 10^20 nanoseconds. (bound, multiply, divide) to ms.
_EPOCH_SCALES = ((10**11, 1000, 1), (10**14, 1, 1), (10**17, 1, 1000), (10**20, 1, 1_000_000))
# Timestamps must lie in [EARLIEST_MS, LATEST_MS) (`service.vocab`): the times everything derived from a
# run (its events, its reputation days and their windows) can be stored with.
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_MS = timedelta(milliseconds=1)


RunEvent = dict[str, Any]  # a run event as sent (SPEC §3.1), or as telemetry is mapped to one


class Event(NamedTuple):
    """One run event. `data` is the caller's object itself (not a copy): treat it as read-only.

    `event_id` is the caller's id, or `event_<position>` when absent; ids may repeat within a run (the
    causal graph makes its node ids unique, see `graph.node_ids`). `timestamp_ms` is epoch milliseconds,
    None when the event has none. `tokens` counts a `token_usage` event's tokens (0 for other types).
    """

    position: int
    event_id: str
    type: str
    timestamp_ms: int | None
    tokens: int
    data: Mapping[str, Any]


def normalize_events(events: Sequence[Any]) -> list[Event]:
    """Validates and normalizes a run's events; raises InputError naming the first bad field."""
    return [normalize_event(data, position) for position, data in enumerate(events)]


def normalize_event(data: Any, position: int) -> Event:
    """One event at `position` of its run, validated and normalized: the one place an event is read into
    an `Event` (a pipeline normalizes each event once: tests/test_pipeline_once.py counts the calls)."""
    event = data if data.__class__ is dict else require_object(data, position)
    kind = event_type_of(event, position)
    tokens = token_count(event, position) if kind == TOKEN_USAGE else 0
    return Event(position, event_id_of(event, position), kind, timestamp_ms_of(event, position), tokens, event)


def require_object(event: Any, position: int) -> Mapping[str, Any]:
    if not isinstance(event, Mapping):
        raise InputError(f"events[{position}]", f"an event must be a JSON object, not {json_kind(event)}")
    return event


def event_type_of(event: Mapping[str, Any], position: int) -> str:
    """The one reading of an event's type, used by the diagnosis, the store, the execution outcome and
    the OTLP mapping: `event`, else `type` (null counts as absent), else process_output; then
    `canonical_type`. A type that is not a string raises InputError naming the field."""
    key = "event"
    kind = event.get("event")
    if kind is None:
        key, kind = "type", event.get("type")
        if kind is None:
            return DEFAULT_TYPE
    if not isinstance(kind, str):
        raise InputError(f"events[{position}].{key}", f"an event type must be a string, not {json_kind(kind)}")
    return canonical_type(kind)


def canonical_type(name: str) -> str:
    """Known types match in any case (SPEC §4: comparisons are case-insensitive) and take their canonical
    spelling ("ERROR_EVENT" -> "error_event"); unknown types are kept as given."""
    return CANONICAL_TYPES.get(name) or CANONICAL_TYPES.get(name.lower(), name)


def event_id_of(event: Mapping[str, Any], position: int) -> str:
    event_id = event.get("event_id")
    if event_id is None:
        return _default_event_id(position)
    if not isinstance(event_id, str) or not event_id:
        raise InputError(f"events[{position}].event_id", f"event_id must be a non-empty string, not {event_id!r:.60}")
    return event_id


def _default_event_id(position: int) -> str:
    return f"event_{position}"


# Memo of default ids: most runs name none of their events, and slicing beats formatting each id. It only
# ever grows, by rebinding a longer tuple, so threads sharing it can race but never see a wrong id.
_DEFAULT_IDS_MEMO_LIMIT = 100_000
_default_ids: tuple[str, ...] = ()


def default_event_ids(count: int) -> list[str]:
    """A new list of the default ids `event_0` .. `event_<count - 1>`."""
    global _default_ids
    memo = _default_ids
    if len(memo) < min(count, _DEFAULT_IDS_MEMO_LIMIT):
        size = min(max(count, 2 * len(memo)), _DEFAULT_IDS_MEMO_LIMIT)  # geometric growth
        memo = _default_ids = tuple(map(_default_event_id, range(size)))
    return [*memo[:count], *map(_default_event_id, range(len(memo), count))]


def timestamp_ms_of(event: Mapping[str, Any], position: int) -> int | None:
    """ISO 8601 (no zone = UTC) or an epoch number in s, ms, µs or ns; None when absent or null.
    Raises InputError naming `events[<position>].timestamp` for anything else, or for a time outside
    `vocab.TIME_RULE`."""
    value = event.get("timestamp")
    if value is None:
        return None
    if isinstance(value, str):
        ms = _iso_ms(value)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        ms = _epoch_ms(value)
    else:
        ms = None
    if ms is None:
        raise InputError(
            f"events[{position}].timestamp",
            f"timestamp {value!r:.60} is not ISO 8601 or an epoch number (s, ms, µs, ns) {TIME_RULE}",
        )
    if not EARLIEST_MS <= ms < LATEST_MS:
        raise InputError(f"events[{position}].timestamp", f"timestamp {value!r:.60} must lie {TIME_RULE}")
    return ms


def _iso_ms(text: str) -> int | None:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (moment - _EPOCH) // _ONE_MS


def _epoch_ms(number: int | float) -> int | None:
    """Integers stay integers end to end (exact at any size); floats are floored."""
    for below, multiply, divide in _EPOCH_SCALES:
        if abs(number) < below:
            return int(number * multiply // divide)
    return None


def json_kind(value: Any) -> str:
    """The JSON name of a value's kind, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__
