"""Runs from bytes (SPEC §3.1): a JSON array of events, an object {"events": [...], ...run fields}, or NDJSON.

Every failure is an InputError naming the field; nothing else escapes. The events are validated as
`normalize_events` and `diagnose` read them, so a parsed run always diagnoses and stores.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from service.diagnosis.errors import InputError
from service.diagnosis.events import Event, json_kind, normalize_events

MAX_DEPTH = 64  # nesting levels of the whole document; deeper input is refused before anything walks it
_BOM = b"\xef\xbb\xbf"
_CONTAINERS = frozenset({dict, list})
_STRING_FIELDS = ("run_id", "identity", "agent_id", "suite", "task_id", "profile", "parent_run_id")
RUN_SHAPES = 'expected a JSON array of events, an object with an "events" array, or NDJSON'
BATCH_SHAPES = 'expected a JSON array of runs, an object with a "sessions" array, or NDJSON of runs'


@dataclass(frozen=True)
class RunInput:
    """A parsed run. Fields absent from the input are None (metadata {}); events are the raw objects."""

    run_id: str | None = None
    identity: str | None = None
    suite: str | None = None
    task_id: str | None = None
    trial: int | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    execution: dict[str, Any] | None = None
    profile: str | None = None  # the diagnosis profile the run names itself (SPEC §4.1)
    parent_run_id: str | None = None  # the run this one is part of (SPEC §3.5)
    events: list[dict[str, Any]] = field(default_factory=list)
    # The events as validated by parsing, so callers need not normalize them again.
    normalized: list[Event] | None = field(default=None, compare=False, repr=False)

    @property
    def agent_id(self) -> str | None:
        """SPEC §3.1 accepts `agent_id` as an alias of `identity`."""
        return self.identity


def parse_run(data: bytes | str) -> RunInput:
    """One run in any of the three encodings. An object with `event` or `type` but no `events` is NDJSON
    of one line: a run of that one event."""
    document = _decode(data)
    if isinstance(document, dict) and "events" not in document and ("event" in document or "type" in document):
        document = [document]
    if isinstance(document, list):
        return _run_of({"events": document}, "")
    if isinstance(document, dict):
        return _run_of(document, "")
    raise InputError("", f"{RUN_SHAPES}; got {json_kind(document)}")


def parse_runs(data: bytes | str) -> list[RunInput]:
    """Many runs: a JSON array of run objects, an object {"sessions": [...]}, or NDJSON of run objects.
    Fields are named from the batch: "sessions[2].events[0].timestamp"."""
    document = _decode(data)
    if isinstance(document, dict):
        if "sessions" not in document:
            raise InputError("sessions", BATCH_SHAPES)
        document = document["sessions"]
        if not isinstance(document, list):
            raise InputError("sessions", f"sessions must be an array, not {json_kind(document)}")
    if not isinstance(document, list):
        raise InputError("", f"{BATCH_SHAPES}; got {json_kind(document)}")
    runs = []
    for index, item in enumerate(document):
        if not isinstance(item, dict):
            raise InputError(f"sessions[{index}]", f"a run must be a JSON object, not {json_kind(item)}")
        runs.append(_run_of(item, f"sessions[{index}]."))
    return runs


def _decode(data: bytes | str) -> Any:
    """The JSON document, or the NDJSON lines as a list; nesting checked."""
    raw = _as_bytes(data).removeprefix(_BOM)
    if not raw.strip():
        raise InputError("", "the input is empty")
    try:
        document = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        document = _ndjson(raw, exc)
    _check_depth(document)
    return document


def _as_bytes(data: bytes | str) -> bytes:
    if isinstance(data, bytes):
        return data
    try:
        return data.encode()
    except UnicodeEncodeError as exc:
        raise InputError("", "the input is not valid UTF-8 text") from exc


def _ndjson(raw: bytes, whole_error: orjson.JSONDecodeError) -> list[Any]:
    """NDJSON when the first non-blank line is a JSON object on its own; else the document's own error."""
    lines = [(number, line) for number, line in enumerate(raw.splitlines(), 1) if line.strip()]
    first = _loads_or_none(lines[0][1])
    if len(lines) < 2 or not isinstance(first, dict):
        raise InputError("", f"not JSON: {_reason(whole_error)}")
    values = []
    for number, line in lines:
        try:
            values.append(orjson.loads(line))
        except orjson.JSONDecodeError as exc:
            raise InputError("", f"NDJSON line {number} is not JSON: {_reason(exc)}") from exc
    return values


def _loads_or_none(line: bytes) -> Any:
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return None


def _reason(error: orjson.JSONDecodeError) -> str:
    return str(error).splitlines()[0] if str(error) else "invalid JSON"


def _check_depth(document: Any) -> None:
    """Walks the containers level by level (no recursion); parsed JSON holds exact dicts and lists."""
    level: list[Any] = [document] if document.__class__ in _CONTAINERS else []
    depth = 0
    while level:
        depth += 1
        if depth > MAX_DEPTH:
            raise InputError("", f"JSON nesting is deeper than {MAX_DEPTH} levels")
        level = [
            child
            for node in level
            for child in (node.values() if node.__class__ is dict else node)
            if child.__class__ in _CONTAINERS
        ]


def _run_of(document: Mapping[str, Any], prefix: str) -> RunInput:
    if "events" not in document:
        raise InputError(f"{prefix}events", 'a run object needs an "events" array')
    events = document["events"]
    if not isinstance(events, list):
        raise InputError(f"{prefix}events", f"events must be an array, not {json_kind(events)}")
    try:
        normalized = normalize_events(events)
    except InputError as exc:
        raise InputError(prefix + exc.field, str(exc)) from None
    strings = {name: _optional(document, name, str, "a string", prefix) for name in _STRING_FIELDS}
    return RunInput(
        run_id=strings["run_id"],
        identity=strings["identity"] if strings["identity"] is not None else strings["agent_id"],
        suite=strings["suite"],
        task_id=strings["task_id"],
        trial=_optional(document, "trial", int, "an integer", prefix),
        metadata=_optional(document, "metadata", dict, "an object", prefix) or {},
        execution=_optional(document, "execution", dict, "an object", prefix),
        profile=strings["profile"],
        parent_run_id=strings["parent_run_id"],
        events=events,
        normalized=normalized,
    )


def _optional(document: Mapping[str, Any], name: str, kind: type, described: str, prefix: str) -> Any:
    value = document.get(name)
    if value is None or (isinstance(value, kind) and not isinstance(value, bool)):
        return value
    raise InputError(f"{prefix}{name}", f"{name} must be {described}, not {json_kind(value)}")
