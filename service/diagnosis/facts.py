"""What the detectors read about a run, gathered in one pass over the events (SPEC §4 "Definitions").

`gather` is the hot path of the diagnosis: it reads each event once, with the common cases (a known type
spelled canonically, no event_id) handled inline and the rest sent to the shared readers of `events`,
which also raise the InputErrors.
"""

from collections import defaultdict
from collections.abc import Hashable, Mapping, Sequence
from typing import Any, NamedTuple

from service.diagnosis.events import (
    CANONICAL_TYPES,
    DEFAULT_TYPE,
    TOKEN_USAGE,
    default_event_ids,
    event_id_of,
    event_type_of,
    require_object,
)
from service.diagnosis.values import canonical_json, token_count

TOOL_CALL = "tool_call"
_NO_ARGS: Mapping[str, Any] = {}


class RunFacts(NamedTuple):
    """A run's events with their types, ids, labels, where each type occurs, and the cost figures."""

    events: Sequence[Mapping[str, Any]]
    types: list[str]
    event_ids: list[str]  # as given (or event_<position>); they may repeat
    labels: list[str]  # label(e) of every event
    positions: Mapping[str, list[int]]  # type -> positions of its events, in input order
    call_keys: list[Hashable]  # loop key of each tool call, aligned with `calls`
    token_total: int
    duplicate_calls: int

    def of_type(self, kind: str) -> list[int]:
        return self.positions.get(kind, [])

    @property
    def calls(self) -> list[int]:
        return self.of_type(TOOL_CALL)


def gather(events: Sequence[Any]) -> RunFacts:
    types: list[str] = []
    event_ids = default_event_ids(len(events))
    labels: list[str] = []
    call_keys: list[Hashable] = []
    call_labels: set[str] = set()
    positions: defaultdict[str, list[int]] = defaultdict(list)
    for position, event in enumerate(events):
        if event.__class__ is not dict:
            event = require_object(event, position)
        # The type is `event_type_of(event, position)`, the one reading of a type. Fast path: when the
        # raw value is a string spelled canonically, CANONICAL_TYPES gives what event_type_of gives
        # (the value is the one event_type_of reads: `event`, else `type`, else DEFAULT_TYPE, which
        # is canonical); every other case (other spellings, unknown types, null, not a string) is
        # event_type_of itself.
        kind = event.get("event")
        if kind is None:
            kind = event.get("type", DEFAULT_TYPE)
        kind = (CANONICAL_TYPES.get(kind) if kind.__class__ is str else None) or event_type_of(event, position)
        if "event_id" in event:
            event_ids[position] = event_id_of(event, position)
        head = event.get("tool") or event.get("name") or event.get("skill") or kind
        if head.__class__ is not str:
            head = canonical_json(head)
        # args(e): `args` if the key exists, else `arguments` if it exists, else {}
        args = event["args"] if "args" in event else event.get("arguments", _NO_ARGS)
        if kind == TOOL_CALL:
            args_json = canonical_json(args)
            label = f"{head}:{args_json}" if args else head
            call_keys.append((tool_key(event.get("tool")), args_json))
            call_labels.add(label)
        else:
            label = f"{head}:{canonical_json(args)}" if args else head
        types.append(kind)
        labels.append(label)
        positions[kind].append(position)
    return RunFacts(
        events=events,
        types=types,
        event_ids=event_ids,
        labels=labels,
        positions=positions,
        call_keys=call_keys,
        token_total=sum(token_count(events[i], i) for i in positions.get(TOKEN_USAGE, ())),
        duplicate_calls=len(call_keys) - len(call_labels),
    )


def tool_key(tool: Any) -> Hashable:
    """A loop key's tool part: equal exactly when the tools' canonical JSON is equal. Strings and null stay
    as they are; any other value becomes a tagged canonical JSON (so 1 and "1", or 1 and 1.0, differ)."""
    return tool if tool is None or tool.__class__ is str else ("json", canonical_json(tool))
