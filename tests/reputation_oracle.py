"""A brute-force recomputation of SPEC §7 from raw events, written independently of the SQL."""

from collections import Counter
from datetime import date, timedelta
from typing import Any

WEIGHTS = {"task_quality": 0.40, "economic": 0.35, "identity_hygiene": 0.25}


def _window(events: list[dict[str, Any]], identity: str, as_of: date) -> list[dict[str, Any]]:
    first = as_of - timedelta(days=89)
    return [e for e in events if e["identity"] == identity and first <= e["timestamp"].date() <= as_of]


def _overall(window: list[dict[str, Any]]) -> tuple[float | None, dict[str, float | None]]:
    per_category: dict[str, float | None] = {}
    for category in WEIGHTS:
        chosen = [e for e in window if e["category"] == category]
        denominator = sum(e["confidence"] * e["weight"] for e in chosen)
        numerator = sum(e["score_delta"] * e["confidence"] * e["weight"] for e in chosen)
        per_category[category] = numerator / denominator if denominator != 0 else None
    present = {c: s for c, s in per_category.items() if s is not None}
    if not present:
        return None, per_category
    return sum(WEIGHTS[c] * s for c, s in present.items()) / sum(WEIGHTS[c] for c in present), per_category


def _scaled(value: float | None) -> float | None:
    return None if value is None else 50 * (1 + value)


def reputation(events: list[dict[str, Any]], identity: str, as_of: date) -> dict[str, Any]:
    window = _window(events, identity, as_of)
    overall, categories = _overall(window)
    weighted = [e for e in window if e["weight"] > 0]
    score_7d = _scaled(_overall(_window(events, identity, as_of - timedelta(days=7)))[0])
    score_30d = _scaled(_overall(_window(events, identity, as_of - timedelta(days=30)))[0])
    current = _scaled(overall)
    return {
        "overall": current,
        "task_quality": _scaled(categories["task_quality"]),
        "economic": _scaled(categories["economic"]),
        "identity_hygiene": _scaled(categories["identity_hygiene"]),
        "confidence": min(1.0, len(weighted) / 100),
        "events": len(weighted),
        "positive_events": sum(1 for e in weighted if e["score_delta"] > 0),
        "negative_events": sum(1 for e in weighted if e["score_delta"] < 0),
        "failures": dict(
            Counter(e["event_type"].removeprefix("failure.") for e in window if e["event_type"].startswith("failure."))
        ),
        "score_7d_ago": score_7d,
        "score_30d_ago": score_30d,
        "trend_7d": None if current is None or score_7d is None else current - score_7d,
        "trend_30d": None if current is None or score_30d is None else current - score_30d,
    }


def assert_matches(actual: dict[str, Any], expected: dict[str, Any], context: str) -> None:
    for key, want in expected.items():
        got = actual[key]
        if isinstance(want, float) and got is not None:
            assert abs(got - want) <= 1e-9, f"{context}: {key} = {got}, expected {want}"
        else:
            assert got == want, f"{context}: {key} = {got!r}, expected {want!r}"
