"""Deterministic diagnosis of agent runs (SPEC §4): events in, Diagnosis out. No I/O, clock or randomness.

`run = parse_run(body)` reads the three §3.1 encodings (InputError names the bad field);
`diagnosis = diagnose(run.events)` gives `trust_score`, `causes`, `to_dict()` and `canonical_json()`;
`diagnose(run.events, AGENT)` judges under another profile (`built_in`, `profiles`, SPEC §4.1, §4.2).
Failure types are detectors (`detectors/`), one module each, listed in `ALL_DETECTORS` (Critiqor's six are
`DETECTORS`).
"""

from service.diagnosis.built_in import AGENT, BUILT_IN, CRITIQOR, LONG_SESSION, built_in_profile, recorded_profile
from service.diagnosis.cause import Cause
from service.diagnosis.detectors import ALL_DETECTORS, DETECTORS, DIMENSIONS, FAILURE_TYPES, Detector, Finding
from service.diagnosis.diagnosis import Diagnosis, diagnose
from service.diagnosis.errors import InputError
from service.diagnosis.events import KNOWN_TYPES, Event, canonical_type, event_type_of, normalize_events
from service.diagnosis.parsing import RunInput, parse_run, parse_runs
from service.diagnosis.profiles import Profile
from service.diagnosis.report import text_report

__all__ = [
    "AGENT", "ALL_DETECTORS", "BUILT_IN", "CRITIQOR", "DETECTORS", "DIMENSIONS", "FAILURE_TYPES", "KNOWN_TYPES",
    "LONG_SESSION", "Cause", "Detector", "Diagnosis", "Event", "Finding", "InputError", "Profile", "RunInput",
    "built_in_profile", "canonical_type", "diagnose", "event_type_of", "normalize_events", "parse_run", "parse_runs",
    "recorded_profile", "text_report",
]  # fmt: skip
