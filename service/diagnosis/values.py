"""Field readers with SPEC §4's rules: canonical JSON, case-insensitive strings, lenient numbers.

A field "is present" when its key exists, whatever its value (so `{"args": null}` has args null).
"""

import json
import math
from collections.abc import Mapping
from typing import Any

import orjson

from service.diagnosis.errors import InputError


def canonical_json(value: Any) -> str:
    """Sorted keys, no whitespace, UTF-8 text: equal JSON values give equal strings."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    except orjson.JSONEncodeError:
        return _canonical_fallback(value)


def _canonical_fallback(value: Any) -> str:
    # Only Python callers reach this (parsed JSON never holds such values): integers beyond 64 bits, keys
    # that are not strings, objects JSON does not know, nesting beyond orjson's limit.
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    except (RecursionError, ValueError, TypeError) as exc:
        raise InputError("", f"an event holds a value that cannot be written as JSON ({type(exc).__name__})") from exc


def lowered(value: Any) -> str | None:
    """The value lower-cased when it is a string, else None (so it matches no keyword)."""
    return value.lower() if isinstance(value, str) else None


def is_false(value: Any) -> bool:
    """JSON false, or the string "false" in any case."""
    return value is False or (isinstance(value, str) and value.lower() == "false")


def is_true(value: Any) -> bool:
    """JSON true, or the string "true" in any case."""
    return value is True or (isinstance(value, str) and value.lower() == "true")


def saturation_of(event: Mapping[str, Any]) -> int:
    """`saturation`, else `saturation_score`: a number, a numeric string or "87%"; floored; unreadable = 0."""
    value = event["saturation"] if "saturation" in event else event.get("saturation_score")
    if isinstance(value, str):
        value = _number_in_text(value)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return 0
    return math.floor(value)


def _number_in_text(text: str) -> float | None:
    try:
        return float(text.strip().removesuffix("%"))
    except ValueError:
        return None


# Any real run is far below this; the cap keeps a run's total inside a 64-bit counter.
MAX_TOKENS_PER_EVENT = 10**12
_TOTAL_KEYS = ("total", "total_tokens")
_PAIR_KEYS = (("input_tokens", "output_tokens"), ("input", "output"))
_EVENT_ONLY_KEY = "tokens"


def token_count(event: Mapping[str, Any], position: int) -> int:
    """A `token_usage` event's tokens (SPEC §4 "token total"): from its `usage` object when it has one,
    else from the event itself, the first present of `total`, `total_tokens`, `input_tokens + output_tokens`,
    `input + output`, then (on the event itself) `tokens`. A pair is present when either half is.
    Non-numeric values count 0; a number outside 0..MAX_TOKENS_PER_EVENT is an InputError."""
    usage = event.get("usage")
    source, prefix = (usage, "usage.") if isinstance(usage, dict) else (event, "")
    for key in _TOTAL_KEYS:
        if key in source:
            return _tokens(source[key], position, prefix + key)
    for first, second in _PAIR_KEYS:
        if first in source or second in source:
            return _tokens(source.get(first), position, prefix + first) + _tokens(
                source.get(second), position, prefix + second
            )
    if source is event and _EVENT_ONLY_KEY in event:
        return _tokens(event[_EVENT_ONLY_KEY], position, _EVENT_ONLY_KEY)
    return 0


def _tokens(value: Any, position: int, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    if not 0 <= value <= MAX_TOKENS_PER_EVENT:  # also false for NaN
        raise InputError(f"events[{position}].{key}", f"a token count must be 0..10^12; got {value!r}")
    return int(value)  # floats floored
