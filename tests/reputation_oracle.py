"""A brute-force recomputation of SPEC §7 and §7.1 from raw events, written independently of the SQL.

An event is a dict with the columns of reputation_events; `source` defaults to `repute`, `capped` to
false and `sign` to 1 (-1: a retraction, which counts as its event with every sum and count negated);
`apply_caps` also reads each event's `arrived_at`. Credibilities are per source (1 when absent);
half_life None means no decay. A Model may also change the category weights, the window's length and the
evidence of full confidence (the tests that change the service's model give the same values here).
"""

from collections import Counter
from datetime import UTC, date, timedelta
from math import fsum
from typing import Any

WEIGHTS = {"task_quality": 0.40, "economic": 0.35, "identity_hygiene": 0.25}
WINDOW_DAYS = 90
FULL_CONFIDENCE_EVENTS = 100
# What a reputation report says of the identity's runs beside its reputation (execution errors included).
RUN_FIGURES = ("runs", "execution_errors", "execution_error_share", "unsafe_runs", "last_run_at")


def reputation_figures(report: dict[str, Any]) -> dict[str, Any]:
    """A reputation report without what it says of the runs."""
    return {name: value for name, value in report.items() if name not in RUN_FIGURES}


RUNS_SOURCE = "repute"


def apply_caps(posted: list[dict[str, Any]], cap: int) -> list[dict[str, Any]]:
    """The events in posting order with `capped` set: past `cap` per (source, identity, UTC day of
    arrival: `arrived_at`, whatever the timestamp), except for the runs' own events."""
    counted: Counter[tuple[str, str, date]] = Counter()
    result = []
    for event in posted:
        source = event.get("source", RUNS_SOURCE)
        slot = (source, event["identity"], event["arrived_at"].astimezone(UTC).date())
        capped = source != RUNS_SOURCE and counted[slot] >= cap
        if not capped:
            counted[slot] += 1
        result.append({**event, "source": source, "capped": capped})
    return result


def _sign(event: dict[str, Any]) -> int:
    return event.get("sign", 1)


class Model:
    def __init__(
        self,
        credibility: dict[str, float] | None = None,
        half_life: float | None = None,
        weights: dict[str, float] | None = None,
        window_days: int = WINDOW_DAYS,
        full_confidence_events: int = FULL_CONFIDENCE_EVENTS,
    ) -> None:
        self.credibility = credibility or {}
        self.half_life = half_life
        self.weights = weights or WEIGHTS
        self.window_days = window_days
        self.full_confidence_events = full_confidence_events

    def source_credibility(self, event: dict[str, Any]) -> float:
        return self.credibility.get(event.get("source", RUNS_SOURCE), 1.0)

    def factor(self, event: dict[str, Any], as_of: date) -> float:
        """What multiplies the event's c·w in a window ending at as_of: credibility x decay."""
        decay = 1.0 if self.half_life is None else 2 ** (-(as_of - event["timestamp"].date()).days / self.half_life)
        return _sign(event) * self.source_credibility(event) * decay


def _window(events: list[dict[str, Any]], identity: str, as_of: date, model: Model) -> list[dict[str, Any]]:
    return [e for e in events if _in_window(e, identity, as_of, model.window_days) and not e.get("capped", False)]


def _overall(window: list[dict[str, Any]], model: Model, as_of: date) -> tuple[float | None, dict[str, float | None]]:
    per_category: dict[str, float | None] = {}
    for category in model.weights:
        chosen = [e for e in window if e["category"] == category]
        # fsum: exactly rounded, so an event and its retraction add up to exactly 0, as the store's Decimal sums
        denominator = fsum(e["confidence"] * e["weight"] * model.factor(e, as_of) for e in chosen)
        numerator = fsum(e["score_delta"] * e["confidence"] * e["weight"] * model.factor(e, as_of) for e in chosen)
        per_category[category] = numerator / denominator if denominator != 0 else None
    present = {c: s for c, s in per_category.items() if s is not None}
    if not present:
        return None, per_category
    return sum(model.weights[c] * s for c, s in present.items()) / sum(model.weights[c] for c in present), per_category


def _scaled(value: float | None) -> float | None:
    return None if value is None else 50 * (1 + value)


def _score_at(events: list[dict[str, Any]], identity: str, as_of: date, model: Model) -> float | None:
    return _scaled(_overall(_window(events, identity, as_of, model), model, as_of)[0])


def reputation(events: list[dict[str, Any]], identity: str, as_of: date, model: Model | None = None) -> dict[str, Any]:
    model = model or Model()
    window = _window(events, identity, as_of, model)
    overall, categories = _overall(window, model, as_of)
    believed = [e for e in window if model.source_credibility(e) > 0]
    weighted = [e for e in believed if e["weight"] > 0]
    score_7d = _score_at(events, identity, as_of - timedelta(days=7), model)
    score_30d = _score_at(events, identity, as_of - timedelta(days=30), model)
    current = _scaled(overall)
    return {
        "overall": current,
        "task_quality": _scaled(categories["task_quality"]),
        "economic": _scaled(categories["economic"]),
        "identity_hygiene": _scaled(categories["identity_hygiene"]),
        "confidence": min(1.0, fsum(model.factor(e, as_of) for e in weighted) / model.full_confidence_events),
        "events": sum(_sign(e) for e in weighted),
        "positive_events": sum(_sign(e) for e in weighted if e["score_delta"] > 0),
        "negative_events": sum(_sign(e) for e in weighted if e["score_delta"] < 0),
        "failures": _failures(believed),
        "score_7d_ago": score_7d,
        "score_30d_ago": score_30d,
        "trend_7d": None if current is None or score_7d is None else current - score_7d,
        "trend_30d": None if current is None or score_30d is None else current - score_30d,
    }


def _failures(events: list[dict[str, Any]]) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for e in events:
        if e["event_type"].startswith("failure."):
            counts[e["event_type"].removeprefix("failure.")] += _sign(e)
    return {failure: count for failure, count in counts.items() if count}


def assert_close(actual: Any, expected: Any, where: str = "") -> None:
    """Equal answers (nested dicts and lists), floats to 1e-9."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict) and actual.keys() == expected.keys(), where
        for key in expected:
            assert_close(actual[key], expected[key], f"{where}.{key}")
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), where
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            assert_close(a, e, f"{where}[{i}]")
    elif isinstance(expected, float) and actual is not None:
        assert abs(actual - expected) <= 1e-9, f"{where}: {actual} != {expected}"
    else:
        assert actual == expected, f"{where}: {actual!r} != {expected!r}"


def assert_matches(actual: dict[str, Any], expected: dict[str, Any], context: str) -> None:
    for key, want in expected.items():
        got = actual[key]
        if isinstance(want, float) and got is not None:
            assert abs(got - want) <= 1e-9, f"{context}: {key} = {got}, expected {want}"
        else:
            assert got == want, f"{context}: {key} = {got!r}, expected {want!r}"


def _in_window(event: dict[str, Any], identity: str, as_of: date, window_days: int = WINDOW_DAYS) -> bool:
    first = as_of - timedelta(days=window_days - 1)
    return event["identity"] == identity and first <= event["timestamp"].date() <= as_of


def type_contributions(
    events: list[dict[str, Any]], identity: str, as_of: date, model: Model
) -> dict[tuple[str, str], tuple[int, float, float]]:
    """Per (category, event type) of the window ending at as_of: counted events, Σδ·c·w, Σc·w."""
    result: dict[tuple[str, str], tuple[int, float, float]] = {}
    for e in _window(events, identity, as_of, model):
        if model.source_credibility(e) == 0:
            continue
        factor = model.factor(e, as_of)
        count, moved, weighed = result.get((e["category"], e["event_type"]), (0, 0.0, 0.0))
        result[(e["category"], e["event_type"])] = (
            count + _sign(e),
            moved + e["score_delta"] * e["confidence"] * e["weight"] * factor,
            weighed + e["confidence"] * e["weight"] * factor,
        )
    return {key: figures for key, figures in result.items() if figures[0]}


def reference_key(reference: dict[str, Any]) -> str:
    """A reference's id, else (a signal posted without one) its event type."""
    return reference["reference_id"] or reference["event_type"]


def reference_moves(events: list[dict[str, Any]], identity: str, as_of: date, model: Model) -> dict[str, float]:
    """Per reference of the window ending at as_of (reference_key): Σδ·c·w of its counted events (a
    reference whose events were all retracted has none)."""
    moves: dict[str, float] = {}
    counts: Counter[str] = Counter()
    for e in _window(events, identity, as_of, model):
        if model.source_credibility(e) > 0:
            moved = e["score_delta"] * e["confidence"] * e["weight"] * model.factor(e, as_of)
            moves[reference_key(e)] = moves.get(reference_key(e), 0.0) + moved
            counts[reference_key(e)] += _sign(e)
    return {reference: moved for reference, moved in moves.items() if counts[reference]}


def reference_points(events: list[dict[str, Any]], identity: str, as_of: date, model: Model) -> dict[str, float]:
    """Per reference (reference_key): the points its counted events add to the overall score on 0..100,
    50 × Σ_c w_c·moved_c / weight_c / Σ w_c over the categories whose Σc·w is not 0."""
    weights: dict[str, float] = {}
    for (category, _), (_, _, weighed) in type_contributions(events, identity, as_of, model).items():
        weights[category] = weights.get(category, 0.0) + weighed
    weighted = {category: weight for category, weight in weights.items() if weight != 0}
    total = sum(model.weights[category] for category in weighted)
    points: dict[str, float] = {}
    for e in _window(events, identity, as_of, model):
        if model.source_credibility(e) > 0 and e["category"] in weighted:
            moved = e["score_delta"] * e["confidence"] * e["weight"] * model.factor(e, as_of)
            share = 50 * model.weights[e["category"]] * moved / weighted[e["category"]] / total
            points[reference_key(e)] = points.get(reference_key(e), 0.0) + share
    return points


def capped_by_source(events: list[dict[str, Any]], identity: str, as_of: date) -> dict[str, int]:
    return dict(Counter(e["source"] for e in events if e.get("capped") and _in_window(e, identity, as_of)))
