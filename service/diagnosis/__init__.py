"""Deterministic diagnosis of agent runs (SPEC §4): events in, Diagnosis out. No I/O, clock or randomness.

`run = parse_run(body)` reads the three §3.1 encodings (InputError names the bad field);
`diagnosis = diagnose(run.events)` gives `trust_score`, `causes`, `to_dict()` and `canonical_json()`.
Failure types are detectors (`detectors/`), one module each, listed in `DETECTORS`.
"""

from service.diagnosis.cause import Cause
from service.diagnosis.detectors import DETECTORS, DIMENSIONS, FAILURE_TYPES, Detector, Finding
from service.diagnosis.diagnosis import Diagnosis, diagnose
from service.diagnosis.errors import InputError
from service.diagnosis.events import KNOWN_TYPES, Event, canonical_type, event_type_of, normalize_events
from service.diagnosis.parsing import RunInput, parse_run, parse_runs
from service.diagnosis.report import text_report

__all__ = [
    "DETECTORS", "DIMENSIONS", "FAILURE_TYPES", "KNOWN_TYPES", "Cause", "Detector", "Diagnosis", "Event", "Finding",
    "InputError", "RunInput", "canonical_type", "diagnose", "event_type_of", "normalize_events", "parse_run",
    "parse_runs", "text_report",
]  # fmt: skip
