"""Deterministic diagnosis of agent runs (SPEC §4): events in, Diagnosis out. No I/O, clock or randomness.

`run = parse_run(body)` reads the three §3.1 encodings (InputError names the bad field);
`diagnosis = diagnose(run.events)` gives `trust_score`, `causes`, `to_dict()` and `canonical_json()`;
`diagnose(run.events, LONG_SESSION)` judges under another profile's thresholds (`profiles`, SPEC §4.1).
Failure types are detectors (`detectors/`), one module each, listed in `DETECTORS`.
"""

from service.diagnosis.cause import Cause
from service.diagnosis.detectors import DETECTORS, DIMENSIONS, FAILURE_TYPES, Detector, Finding
from service.diagnosis.diagnosis import Diagnosis, diagnose
from service.diagnosis.errors import InputError
from service.diagnosis.events import KNOWN_TYPES, Event, canonical_type, event_type_of, normalize_events
from service.diagnosis.parsing import RunInput, parse_run, parse_runs
from service.diagnosis.profiles import BUILT_IN, CRITIQOR, LONG_SESSION, Profile, built_in_profile, recorded_profile
from service.diagnosis.report import text_report

__all__ = [
    "BUILT_IN", "CRITIQOR", "DETECTORS", "DIMENSIONS", "FAILURE_TYPES", "KNOWN_TYPES", "LONG_SESSION", "Cause",
    "Detector", "Diagnosis", "Event", "Finding", "InputError", "Profile", "RunInput", "built_in_profile",
    "canonical_type", "diagnose", "event_type_of", "normalize_events", "parse_run", "parse_runs", "recorded_profile",
    "text_report",
]  # fmt: skip
