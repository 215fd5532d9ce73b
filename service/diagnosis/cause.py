"""A detected failure cause as the diagnosis reports it."""

from typing import Any, NamedTuple

CHAIN_JOINER = " -> "


class Cause(NamedTuple):
    type: str
    severity: str  # critical, high or medium
    impact_score: int  # <= 0; the dimension's penalty is its absolute value
    description: str
    causal_chain: str  # the chain's steps joined with " -> "
    evidence: tuple[str, ...]  # graph node ids of the evidence events, in evidence order
    remediation: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "severity": self.severity,
            "impact_score": self.impact_score,
            "description": self.description,
            "causal_chain": self.causal_chain,
            "evidence": list(self.evidence),
            "remediation": self.remediation,
        }
