"""Diagnosis profiles (SPEC §4.1): the thresholds a run is judged by and the detectors that judge it,
passed to the detectors as data.

Critiqor's cost thresholds were made for short runs; a coding session of an hour spends ten times its
critical budget without doing anything wrong, and a verdict that fires on every session tells nobody
anything. A profile names the cost thresholds that fit the agent:

- `tokens_high`: a token total from which `cost_explosion` fires (high);
- `tokens_critical`: from which it is critical;
- `tokens_per_point`: tokens per impact point (impact = -min(30, 10 + 4·duplicates + total // this));
- `duplicates`: duplicate calls from which it fires, whatever the tokens;

and `detectors`, the failure types it runs (SPEC §4.2: Critiqor's six never look at errors). The built-in
profiles are in `built_in` (this module is what the detectors read, so it cannot know the registry).
"""

from dataclasses import dataclass
from typing import Any

THRESHOLDS = ("tokens_high", "tokens_critical", "tokens_per_point", "duplicates")


@dataclass(frozen=True, slots=True)
class Profile:
    name: str
    tokens_high: int
    tokens_critical: int
    tokens_per_point: int
    duplicates: int
    detectors: frozenset[str]  # failure types of the registry

    def to_dict(self) -> dict[str, Any]:
        """What a diagnosis records of the profile that judged it (keys and detectors in sorted order)."""
        return {
            "detectors": sorted(self.detectors),
            "duplicates": self.duplicates,
            "name": self.name,
            "tokens_critical": self.tokens_critical,
            "tokens_high": self.tokens_high,
            "tokens_per_point": self.tokens_per_point,
        }

    def describe(self) -> str:
        """The profile and its thresholds in one line, for people."""
        return (
            f"profile {self.name}: cost_explosion from {self.tokens_high:,} tokens (critical from "
            f"{self.tokens_critical:,}, one impact point per {self.tokens_per_point:,}) or {self.duplicates} "
            "duplicate calls"
        )
