"""What a detector is: one failure type, its dimension, and a function from run facts and the diagnosis
profile (its thresholds, as data: service.diagnosis.profiles) to findings."""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from service.diagnosis.facts import RunFacts
from service.diagnosis.profiles import Profile

CRITICAL = "critical"
HIGH = "high"
MEDIUM = "medium"


class Finding(NamedTuple):
    """One cause as a detector sees it: evidence as event positions, in the order they are evidence."""

    evidence: Sequence[int]
    severity: str
    impact_score: int  # <= 0
    description: str


@dataclass(frozen=True, slots=True)
class Detector:
    failure_type: str
    dimension: str  # the score this failure type lowers
    weight: float  # the dimension's weight in the trust score
    causal_chain: tuple[str, ...]
    remediation: str
    detect: Callable[[RunFacts, Profile], list[Finding]]


def at_least_one(matches: Sequence[int], severity: str, impact_score: int, description: str) -> list[Finding]:
    """The shape of most detectors: one finding holding every matching event, when there is any."""
    return [Finding(matches, severity, impact_score, description)] if matches else []
