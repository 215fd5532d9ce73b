"""Diagnosis profiles (SPEC §4.1): the thresholds a run is judged by, passed to the detectors as data.

Critiqor's cost thresholds were made for short runs; a coding session of an hour spends ten times its
critical budget without doing anything wrong, and a verdict that fires on every session tells nobody
anything. A profile names the cost thresholds that fit the agent:

- `tokens_high`: a token total from which `cost_explosion` fires (high);
- `tokens_critical`: from which it is critical;
- `tokens_per_point`: tokens per impact point (impact = -min(30, 10 + 4·duplicates + total // this));
- `duplicates`: duplicate calls from which it fires, whatever the tokens.

`critiqor` is the default and the only profile under which Critiqor parity holds; `long-session` fits
sessions of a coding agent (the default for OTLP log sessions: service.profiles says where each applies).
"""

from dataclasses import dataclass
from typing import Any

from service.diagnosis.errors import InputError

THRESHOLDS = ("tokens_high", "tokens_critical", "tokens_per_point", "duplicates")


@dataclass(frozen=True, slots=True)
class Profile:
    name: str
    tokens_high: int
    tokens_critical: int
    tokens_per_point: int
    duplicates: int

    def to_dict(self) -> dict[str, Any]:
        """What a diagnosis records of the profile that judged it (keys in sorted order)."""
        return {
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


CRITIQOR = Profile("critiqor", tokens_high=12_000, tokens_critical=30_000, tokens_per_point=6_000, duplicates=3)
LONG_SESSION = Profile(
    "long-session", tokens_high=200_000, tokens_critical=1_000_000, tokens_per_point=100_000, duplicates=3
)
BUILT_IN: dict[str, Profile] = {profile.name: profile for profile in (CRITIQOR, LONG_SESSION)}


def built_in_profile(name: str | None, field: str = "profile") -> Profile:
    """A built-in profile by name (None: `critiqor`), for a diagnosis offline, which knows no tenant's."""
    if name is None:
        return CRITIQOR
    found = BUILT_IN.get(name)
    if found is None:
        known = ", ".join(BUILT_IN)
        raise InputError(
            field, f"{name!r} is not a built-in profile ({known}); offline, give a JSON file of thresholds"
        )
    return found


def recorded_profile(view: dict[str, Any]) -> Profile:
    """The profile a diagnosis (its JSON view) was judged under: the one it records, else `critiqor`,
    which a diagnosis never records (so that its bytes stay Critiqor's)."""
    recorded = view.get("profile")
    return CRITIQOR if recorded is None else Profile(**recorded)
