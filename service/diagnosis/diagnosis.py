"""`diagnose(events, profile) -> Diagnosis`: pure and deterministic (SPEC §4, §4.1).

The diagnosis records the profile that judged it (`profile: {name, tokens_high, tokens_critical,
tokens_per_point, duplicates, detectors}`) and its hash covers it, so the same events under the same profile
give the same bytes and another profile gives other bytes. The one exception is `critiqor`, the engine's
default (the service's is `agent`, SPEC §4.2): it is never recorded (a diagnosis without `profile` was
judged under `critiqor`), so a diagnosis under it is byte for byte what it was before profiles existed, and
Critiqor's, and every stored hash still matches.
"""

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import orjson

from service.diagnosis.built_in import CRITIQOR
from service.diagnosis.cause import CHAIN_JOINER, Cause
from service.diagnosis.detectors import ALL_DETECTORS, Detector
from service.diagnosis.facts import RunFacts, gather
from service.diagnosis.graph import causal_graph, failure_node_id, node_ids
from service.diagnosis.profiles import Profile
from service.diagnosis.scoring import dimension_scores, primary_cause, readiness_level, trust_score
from service.diagnosis.summary import (
    NO_FAILURE_EXPLANATION,
    cost_analysis,
    evidence_summary,
    executive_summary,
    recommendations,
)
from service.memo import memoized
from service.vocab import Readiness

HASH_KEY = "diagnosis_hash"
GRAPH_KEY = "causal_graph"
_CHAINS = {d.failure_type: CHAIN_JOINER.join(d.causal_chain) for d in ALL_DETECTORS}


@dataclass(frozen=True)
class Diagnosis:
    """A run's diagnosis. The attributes are what storage reads; `to_dict()` is the full JSON-ready view
    and `canonical_json()` its canonical bytes. The causal graph and the hash are built on first use."""

    trust_score: int
    readiness_level: Readiness
    scores: dict[str, int]  # dimension -> 0..100, in weight order
    causes: tuple[Cause, ...]
    primary: Cause | None
    evidence_summary: dict[str, Any]
    cost_analysis: dict[str, int]
    profile: Profile
    _node_ids: list[str] = field(repr=False)
    _types: list[str] = field(repr=False)
    _labels: list[str] = field(repr=False)

    @property
    def primary_failure_type(self) -> str | None:
        return None if self.primary is None else self.primary.type

    @property
    def total_tokens(self) -> int:
        return self.cost_analysis["total_tokens"]

    @property
    def event_count(self) -> int:
        count: int = self.evidence_summary["event_count"]
        return count

    @property
    def event_counts(self) -> dict[str, int]:
        counts: dict[str, int] = self.evidence_summary["event_counts"]
        return counts

    @memoized
    def causal_graph(self) -> dict[str, list[dict[str, str]]]:
        return causal_graph(self._node_ids, self._types, self._labels, self.causes)

    @memoized
    def diagnosis_hash(self) -> str:
        """sha256 (hex) of the canonical JSON without the hash key."""
        return hashlib.sha256(_canonical({**self._summaries, GRAPH_KEY: self._graph_json})).hexdigest()

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready view, a new dict each call; the nested values are shared: treat them as read-only."""
        return {**self._summaries, GRAPH_KEY: self.causal_graph, HASH_KEY: self.diagnosis_hash}

    def canonical_json(self) -> bytes:
        """Sorted keys, no NaN, UTF-8: byte-identical for the same input."""
        return self._canonical_json

    @memoized
    def _canonical_json(self) -> bytes:
        return _canonical({**self._summaries, GRAPH_KEY: self._graph_json, HASH_KEY: self.diagnosis_hash})

    @memoized
    def _graph_json(self) -> orjson.Fragment:
        # The graph is most of the bytes: serialized once, then embedded as is. Its dicts are built with
        # their keys in sorted order, so plain dumps is canonical (and skips sorting 100,000s of dicts).
        return orjson.Fragment(orjson.dumps(self.causal_graph))

    @memoized
    def _summaries(self) -> dict[str, Any]:
        """Everything but the graph and the hash; the profile unless it is `critiqor` (see the module)."""
        summaries: dict[str, Any] = {
            "trust_score": self.trust_score,
            "readiness_level": self.readiness_level,
            "scores": self.scores,
            "primary_diagnosis": self._primary_view(),
            "failure_causes": [cause.to_dict() for cause in self.causes],
            "evidence_summary": self.evidence_summary,
            "cost_analysis": self.cost_analysis,
            "executive_summary": executive_summary(
                self.trust_score, self.readiness_level, self.primary, len(self.causes)
            ),
            "recommendations": recommendations(self.causes),
        }
        if self.profile != CRITIQOR:
            summaries["profile"] = self.profile.to_dict()
        return summaries

    def _primary_view(self) -> dict[str, Any]:
        primary = self.primary
        if primary is None:
            return {
                "root_cause_failure_type": None,
                "causal_chain_explanation": NO_FAILURE_EXPLANATION,
                "severity": None,
                "description": None,
            }
        return {
            "root_cause_failure_type": primary.type,
            "causal_chain_explanation": primary.causal_chain,
            "severity": primary.severity,
            "description": primary.description,
        }


def diagnose(events: Sequence[Any], profile: Profile = CRITIQOR) -> Diagnosis:
    """Diagnoses a run's events (raw objects, in run order) with a profile's detectors and thresholds
    (SPEC §4.1).

    Raises InputError for what the diagnosis cannot read: an event that is not an object, a type or an
    event_id that is not a string, a token count out of range. Timestamps are not read here
    (`normalize_events` checks them)."""
    run = gather(events)
    ids = node_ids(run.event_ids, _failure_node_ids(profile.detectors))
    found: list[Cause] = []
    for detector in ALL_DETECTORS:
        if detector.failure_type in profile.detectors:
            found += _causes(detector, run, ids, profile)
    causes = tuple(found)
    scores = dimension_scores(causes)
    trust = trust_score(scores, causes)
    return Diagnosis(
        trust_score=trust,
        readiness_level=readiness_level(trust, causes),
        scores=scores,
        causes=causes,
        primary=primary_cause(causes),
        evidence_summary=evidence_summary(run),
        cost_analysis=cost_analysis(run, causes),
        profile=profile,
        _node_ids=ids,
        _types=run.types,
        _labels=run.labels,
    )


@cache
def _failure_node_ids(detectors: frozenset[str]) -> frozenset[str]:
    """The node ids a profile's failure nodes may take: under critiqor, Critiqor's own (its bytes: an event
    may be called `failure_tool_failures` there)."""
    return frozenset(map(failure_node_id, detectors))


def _causes(detector: Detector, run: RunFacts, ids: list[str], profile: Profile) -> list[Cause]:
    kind, chain, remediation = detector.failure_type, _CHAINS[detector.failure_type], detector.remediation
    return [
        Cause(kind, found.severity, found.impact_score, found.description, chain, evidence_ids, remediation)
        for found in detector.detect(run, profile)
        for evidence_ids in [tuple(map(ids.__getitem__, found.evidence))]
    ]


def _canonical(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
