"""The built-in diagnosis profiles (SPEC §4.1, §4.2), and the profile a stored diagnosis was judged under.

- `critiqor`: Critiqor's six detectors and thresholds, the only profile under which Critiqor parity holds.
  The engine's `diagnose(events)` judges under it when given no profile; a run asks for it by name.
- `agent`: the same thresholds and every detector, so errors count: the service's default for posted
  sessions, traces and `repute record` (service.profiles says where each applies).
- `long-session`: thresholds for the sessions of a coding agent, and every detector: the default for OTLP
  log sessions.
"""

from typing import Any

from service.diagnosis.detectors import DETECTORS, FAILURE_TYPES
from service.diagnosis.errors import InputError
from service.diagnosis.profiles import Profile

EVERY_DETECTOR = frozenset(FAILURE_TYPES)
CRITIQOR_SIX = frozenset(d.failure_type for d in DETECTORS)

CRITIQOR = Profile(
    "critiqor", tokens_high=12_000, tokens_critical=30_000, tokens_per_point=6_000, duplicates=3, detectors=CRITIQOR_SIX
)
AGENT = Profile(
    "agent", tokens_high=12_000, tokens_critical=30_000, tokens_per_point=6_000, duplicates=3, detectors=EVERY_DETECTOR
)
LONG_SESSION = Profile(
    "long-session",
    tokens_high=200_000,
    tokens_critical=1_000_000,
    tokens_per_point=100_000,
    duplicates=3,
    detectors=EVERY_DETECTOR,
)
BUILT_IN: dict[str, Profile] = {profile.name: profile for profile in (CRITIQOR, AGENT, LONG_SESSION)}


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
    which a diagnosis never records (so that its bytes stay Critiqor's). A profile recorded without
    `detectors` was recorded before SPEC §4.2, when every profile ran Critiqor's six."""
    recorded = view.get("profile")
    if recorded is None:
        return CRITIQOR
    return Profile(**{**recorded, "detectors": frozenset(recorded.get("detectors", CRITIQOR_SIX))})
