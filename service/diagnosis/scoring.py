"""Dimension scores, trust score, readiness and the primary cause (SPEC §4 "Scores", "Primary diagnosis",
§4.2: the causes of a failure type without a dimension take their impact off the trust score)."""

from collections.abc import Sequence

from service.diagnosis.cause import Cause
from service.diagnosis.detectors import ALL_DETECTORS, CRITICAL, DETECTORS, HIGH
from service.vocab import Readiness

UNSAFE_BELOW = 60
REVIEW_BELOW = 80


_UNSCORED = frozenset(d.failure_type for d in ALL_DETECTORS if d.dimension is None)


def dimension_scores(causes: Sequence[Cause]) -> dict[str, int]:
    """Per dimension, 100 minus the largest |impact| among its failure type's causes (never below 0)."""
    penalties: dict[str, int] = {}
    for cause in causes:
        penalties[cause.type] = max(penalties.get(cause.type, 0), abs(cause.impact_score))
    return {d.dimension: max(0, 100 - penalties.get(d.failure_type, 0)) for d in DETECTORS if d.dimension is not None}


def trust_score(scores: dict[str, int], causes: Sequence[Cause]) -> int:
    """The dimensions' weighted score (SPEC §4), plus the impacts of the causes without a dimension
    (SPEC §4.2: a crash reads 70, never 100), clamped to 0..100."""
    total = 0.0
    for detector in DETECTORS:  # summed as floats in this order: the rounding depends on it
        if detector.dimension is not None:
            total += scores[detector.dimension] * detector.weight
    weighted = max(0, min(100, round(total)))
    return max(0, min(100, weighted + sum(cause.impact_score for cause in causes if cause.type in _UNSCORED)))


def readiness_level(trust: int, causes: Sequence[Cause]) -> Readiness:
    severities = {cause.severity for cause in causes}
    if CRITICAL in severities or trust < UNSAFE_BELOW:
        return Readiness.UNSAFE
    if HIGH in severities or trust < REVIEW_BELOW:
        return Readiness.REVIEW
    return Readiness.READY


def primary_cause(causes: Sequence[Cause]) -> Cause | None:
    """The cause with the largest |impact|; ties go to the earlier cause."""
    best = None
    for cause in causes:
        if best is None or abs(cause.impact_score) > abs(best.impact_score):
            best = cause
    return best
