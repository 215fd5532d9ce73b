"""The reputation scoring model. `windows` and `combine` compute one identity's figures from its daily
aggregates (the API's read); the SQL view `reputation_at` (migrations/0006, 0018) does the same for the whole
fleet. Tests check both against a recomputation from raw events.

SPEC §7.1 at read time: each event's c·w is multiplied by its source's credibility (default 1) and,
with a half-life h, by 2^(-(window end - day) / h). Confidence's N is the sum of credibility x decay over
the events with weight > 0: a plain count without decay at credibility 1, and a source set to
credibility 0 stops counting everywhere, so its events also leave the counts (events, positive and
negative events, failures). Capped events (over the per-source daily cap) never count.
"""

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

import orjson

from service.vocab import REPORTED_DECIMALS

CATEGORY_WEIGHTS: dict[str, float] = {"task_quality": 0.40, "economic": 0.35, "identity_hygiene": 0.25}
CATEGORIES: tuple[str, ...] = tuple(CATEGORY_WEIGHTS)
WINDOW_DAYS = 90
TREND_OFFSETS_DAYS = (7, 30)
FULL_CONFIDENCE_EVENTS = 100

# Sources (SPEC §7.1): the runs' own events, and signals posted before events recorded their source.
# Posted signals carry the id of the key that posted them.
REPUTE_SOURCE = "repute"
LEGACY_SOURCE = "legacy"

# Namespace of the deterministic ids of emitted events (UUIDv5 of tenant/reference/event type).
EVENT_NAMESPACE = uuid.UUID("6f1c1d7e-2d4b-5c59-9a51-7b1f3e0c8a10")


# Namespace of posted signals' stored ids (SPEC §7.1 "Ids"), apart from EVENT_NAMESPACE: a signal's id
# can never be one that a run, a rebuild or a retraction writes, so no client can pre-claim those.
SIGNAL_NAMESPACE = uuid.UUID("1be7c072-d173-4a2e-9c31-e52ddc1e974c")


def event_uuid(*parts: str) -> uuid.UUID:
    """A stable id: the same parts always give the same UUID, so re-emitting is a no-op."""
    return uuid.uuid5(EVENT_NAMESPACE, "/".join(parts))


def signal_uuid(tenant: str, source: str, client_id: str | None, content: str) -> uuid.UUID:
    """A posted signal's stored id: of the client's own id when it gave one, else of the signal's canonical
    content; per tenant and source, so one source's ids never shadow another's."""
    name = ["id", client_id] if client_id is not None else ["content", content]
    return uuid.uuid5(SIGNAL_NAMESPACE, orjson.dumps([tenant, source, *name]).decode())


@dataclass(frozen=True)
class ReputationEvent:
    event_id: uuid.UUID
    timestamp: datetime
    identity: str
    category: str
    event_type: str
    score_delta: float
    confidence: float = 1.0
    weight: float = 1.0
    reference_type: str = ""
    reference_id: str = ""
    attributes: dict[str, str] = field(default_factory=dict)
    sign: int = 1  # -1: a retraction, which takes the event named by attributes['retracts'] out of every sum


def reported(value: float | None) -> float | None:
    """A figure as responses show it: rounded to REPORTED_DECIMALS (SPEC §7), None kept; exact values
    stay internal."""
    return None if value is None else round(value, REPORTED_DECIMALS)


def _category_score(weighted: float, weight: float) -> float | None:
    return None if weight == 0 else weighted / weight


def _overall(scores: dict[str, float | None]) -> float | None:
    """Σ w_c·S_c / Σ w_c over the categories with a score, reported on 0..100; the same operations in
    the same order as the view reputation_at, so both give the same float."""
    tq, ec, ih = (scores.get(category) for category in CATEGORIES)
    denominator = 0.40 * (tq is not None) + 0.35 * (ec is not None) + 0.25 * (ih is not None)
    if denominator == 0:
        return None
    return 50 * (1 + (0.40 * (tq or 0.0) + 0.35 * (ec or 0.0) + 0.25 * (ih or 0.0)) / denominator)


def _scaled(score: float | None) -> float | None:
    return None if score is None else 50 * (1 + score)


def _difference(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


@dataclass(frozen=True)
class ReadWeights:
    """What a read weighs the daily sums with (SPEC §7.1; sql/reputation_read_weights.sql)."""

    half_life_days: float  # 0: no decay, the flat window
    credibilities: Mapping[str, float]  # a source without one has credibility 1

    def credibility(self, source: str) -> float:
        return self.credibilities.get(source, 1.0)

    def decay(self, day: date, window_end: date) -> float:
        """2^(-(window end - day) / h), as the view computes it (exp2 of a day count over h)."""
        return 1.0 if self.half_life_days == 0 else 2.0 ** ((day - window_end).days / self.half_life_days)


# The view's Decimal128(18) sums as integers in units of 10^-18: the same exact sums, and the same
# conversions as ClickHouse's (a float to Decimal: x 10^18 in double precision, truncated; a Decimal to
# Float64: the integer as a double, / 10^18), so that this read and the view agree to the bit.
DECIMAL_UNIT = 1e18


def _decimal(value: float) -> int:
    return int(value * DECIMAL_UNIT)


def _float(decimal: int) -> float:
    return float(decimal) / DECIMAL_UNIT


@dataclass
class _WindowSums:
    weighted: int = 0
    weight: int = 0
    events: int = 0
    positive_events: int = 0
    negative_events: int = 0
    failures: dict[str, int] = field(default_factory=dict)


def windows(daily: Iterable[Mapping[str, Any]], weights: ReadWeights, as_of: date) -> list[dict[str, Any]]:
    """Per (category, window) sums from one identity's daily sums per source (sql/identity_daily_sources.sql),
    with the view reputation_at's arithmetic: each day's sums times credibility and decay, converted to
    Decimal(18) (`_decimal`) and summed exactly, so the result does not depend on the order of rows. `evidence`
    (confidence's N) is the window's sum over all categories. The counts leave out sources of
    credibility 0, and a failure type whose events were all retracted is left out."""
    sums: dict[tuple[str, int], _WindowSums] = {}
    evidence: dict[int, int] = {}
    spans = [  # each window: its offset, first and last day
        (offset, as_of - timedelta(days=offset + WINDOW_DAYS - 1), as_of - timedelta(days=offset))
        for offset in (0, *TREND_OFFSETS_DAYS)
    ]
    for row in daily:
        day = row["day"]
        credibility = weights.credibility(row["source"])
        for offset, first, window_end in spans:
            if not first <= day <= window_end:
                continue
            decay = weights.decay(day, window_end)
            key = (row["category"], offset)
            window = sums.get(key)
            if window is None:
                window = sums[key] = _WindowSums()
            window.weighted += _decimal(row["weighted"] * credibility * decay)
            window.weight += _decimal(row["weight"] * credibility * decay)
            evidence[offset] = evidence.get(offset, 0) + _decimal(row["events"] * credibility * decay)
            if credibility > 0:
                window.events += row["events"]
                window.positive_events += row["positive_events"]
                window.negative_events += row["negative_events"]
                for failure_type, count in row["failures"].items():
                    window.failures[failure_type] = window.failures.get(failure_type, 0) + count
    return [
        {
            "category": category,
            "offset_days": offset,
            "weighted": _float(window.weighted),
            "weight": _float(window.weight),
            "evidence": _float(evidence[offset]),
            "events": window.events,
            "positive_events": window.positive_events,
            "negative_events": window.negative_events,
            "failures": {name: count for name, count in window.failures.items() if count != 0},
        }
        for (category, offset), window in sums.items()
    ]


def combine(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """SPEC §7 figures from per-(category, window) sums (`windows`); None without rows."""
    if not rows:
        return None
    scores: dict[int, dict[str, float | None]] = {offset: {} for offset in (0, *TREND_OFFSETS_DAYS)}
    for row in rows:
        scores[row["offset_days"]][row["category"]] = _category_score(row["weighted"], row["weight"])
    overall, score_7d, score_30d = (_overall(scores[offset]) for offset in (0, *TREND_OFFSETS_DAYS))
    current = [row for row in rows if row["offset_days"] == 0]
    failures: dict[str, int] = {}
    for row in current:
        for failure_type, count in row["failures"].items():
            failures[failure_type] = failures.get(failure_type, 0) + count
    return {
        "overall": overall,
        **{category: _scaled(scores[0].get(category)) for category in CATEGORIES},
        "confidence": min(1.0, current[0]["evidence"] / FULL_CONFIDENCE_EVENTS) if current else 0.0,
        "events": sum(row["events"] for row in current),
        "positive_events": sum(row["positive_events"] for row in current),
        "negative_events": sum(row["negative_events"] for row in current),
        "failures": failures,
        "score_7d_ago": score_7d,
        "score_30d_ago": score_30d,
        "trend_7d": _difference(overall, score_7d),
        "trend_30d": _difference(overall, score_30d),
    }
