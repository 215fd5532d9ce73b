"""What a detector is: one failure type, its dimension (or none), and a function from run facts and the
diagnosis profile (its thresholds, as data: service.diagnosis.profiles) to findings.

Critiqor's six detectors (SPEC §4) each lower a dimension score, and the trust score is the dimensions'
weighted sum. The detectors beyond Critiqor (SPEC §4.2) have no dimension: their causes' impacts are added
to the trust score itself, so a crash costs its 30 points whatever the six say."""

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
    dimension: str | None  # the score this failure type lowers; None: its impact lowers the trust score
    weight: float  # the dimension's weight in the trust score (0 without a dimension)
    causal_chain: tuple[str, ...]
    remediation: str
    detect: Callable[[RunFacts, Profile], list[Finding]]


def at_least_one(matches: Sequence[int], severity: str, impact_score: int, description: str) -> list[Finding]:
    """The shape of most detectors: one finding holding every matching event, when there is any."""
    return [Finding(matches, severity, impact_score, description)] if matches else []
