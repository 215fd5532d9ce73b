"""Diagnosis profiles in the engine (SPEC §4.1): the cost thresholds are the profile's. A diagnosis under
`critiqor` (the default) records no profile and keeps Critiqor's bytes; under any other profile it records
the profile, and the hash covers it."""

import copy
import hashlib
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.diagnosis import (
    CRITIQOR,
    FAILURE_TYPES,
    LONG_SESSION,
    Diagnosis,
    Profile,
    diagnose,
    recorded_profile,
    text_report,
)
from service.diagnosis.built_in import EVERY_DETECTOR
from service.judge import to_run_events
from tests.judge_support import SESSIONS, fixture_session, record
from tests.test_diagnosis_properties import RUNS


def _causes(diagnosis: Diagnosis) -> list[tuple[str, str, int]]:
    return [(cause.type, cause.severity, cause.impact_score) for cause in diagnosis.causes]


def _coding_session(request_tokens: list[int]) -> list[dict[str, Any]]:
    """A clean Claude Code session: a prompt, then per API request a tool result with its own parameters."""
    records = [record("user_prompt", 0)]
    for n, tokens in enumerate(request_tokens):
        records.append(
            record("tool_result", 2 * n + 1, tool_name="Read", success=True, tool_parameters=f'{{"f": {n}}}')
        )
        records.append(record("api_request", 2 * n + 2, input_tokens=tokens - 100, output_tokens=100))
    return to_run_events(records)


@pytest.mark.parametrize("session", SESSIONS)
def test_the_claude_code_fixture_sessions_are_no_cost_explosion_under_long_session(session: str) -> None:
    events = to_run_events(fixture_session(session))
    assert [cause[0] for cause in _causes(diagnose(events))] == ["cost_explosion"]  # the issue, under critiqor
    judged = diagnose(events, LONG_SESSION)
    assert _causes(judged) == [] and (judged.trust_score, judged.readiness_level) == (100, "ready_for_runtime")


def test_a_clean_coding_session_fits_long_session_and_a_huge_one_does_not() -> None:
    five_requests = _coding_session([3_536] * 5)  # 17,680 tokens
    assert _causes(diagnose(five_requests)) == [("cost_explosion", "high", -12)]
    assert _causes(diagnose(five_requests, LONG_SESSION)) == []
    one_call = _coding_session([31_000])
    assert diagnose(one_call).readiness_level == "unsafe_for_production"
    assert _causes(diagnose(one_call, LONG_SESSION)) == []

    # 250,000 tokens: -min(30, 10 + 0 + 250,000 // 100,000) = -12, high (under 1,000,000).
    assert _causes(diagnose(_coding_session([50_000] * 5), LONG_SESSION)) == [("cost_explosion", "high", -12)]
    huge = diagnose(_coding_session([250_000] * 4), LONG_SESSION)
    assert _causes(huge) == [("cost_explosion", "critical", -20)] and huge.readiness_level == "unsafe_for_production"
    assert diagnose(_coding_session([199_999]), LONG_SESSION).causes == ()


def test_the_duplicate_threshold_is_the_profiles() -> None:
    calls = [{"event": "tool_call", "tool": "search", "args": {"q": n % 2}} for n in range(6)]  # 4 duplicates
    assert _causes(diagnose(calls))[-1] == ("cost_explosion", "high", -26)
    patient = Profile(
        "patient", tokens_high=12_000, tokens_critical=30_000, tokens_per_point=6_000, duplicates=5,
        detectors=EVERY_DETECTOR,
    )  # fmt: skip
    assert "cost_explosion" not in [cause[0] for cause in _causes(diagnose(calls, patient))]


def test_critiqor_is_never_recorded_and_any_other_profile_is() -> None:
    events = _coding_session([3_536] * 5)
    default, critiqor, long = diagnose(events), diagnose(events, CRITIQOR), diagnose(events, LONG_SESSION)
    assert default.canonical_json() == critiqor.canonical_json()
    assert "profile" not in default.to_dict() and recorded_profile(default.to_dict()) == CRITIQOR
    assert long.to_dict()["profile"] == {
        "name": "long-session", "tokens_high": 200_000, "tokens_critical": 1_000_000, "tokens_per_point": 100_000,
        "duplicates": 3, "detectors": sorted(FAILURE_TYPES),
    }  # fmt: skip
    assert recorded_profile(orjson.loads(long.canonical_json())) == LONG_SESSION
    # The profile is one of the summaries the hash covers.
    renamed = Profile("long-session-2", 200_000, 1_000_000, 100_000, 3, EVERY_DETECTOR)
    assert diagnose(events, renamed).diagnosis_hash != long.diagnosis_hash


def test_the_text_report_names_the_profile_and_its_thresholds() -> None:
    last = text_report(diagnose(_coding_session([3_536]), LONG_SESSION)).splitlines()[-1]
    assert last == (
        "profile long-session: cost_explosion from 200,000 tokens (critical from 1,000,000, one impact point per"
        " 100,000) or 3 duplicate calls"
    )
    assert text_report(diagnose([])).splitlines()[-1].startswith("profile critiqor: cost_explosion from 12,000 tokens")


POSITIVE = st.integers(min_value=1, max_value=400_000)
PROFILES = st.one_of(
    st.sampled_from([CRITIQOR, LONG_SESSION]),
    st.builds(
        Profile,
        name=st.sampled_from(["critiqor", "long-session", "tight"]),
        tokens_high=POSITIVE,
        tokens_critical=POSITIVE,
        tokens_per_point=POSITIVE,
        duplicates=st.integers(min_value=1, max_value=6),
        detectors=st.frozensets(st.sampled_from(FAILURE_TYPES), min_size=1),
    ),
)


@settings(max_examples=150, deadline=None)
@given(RUNS, PROFILES, PROFILES)
def test_the_same_events_under_the_same_profile_give_the_same_bytes_and_another_profile_another_hash(
    events: list[dict[str, Any]], profile: Profile, other: Profile
) -> None:
    first, again = diagnose(events, profile), diagnose(copy.deepcopy(events), profile)
    assert first.canonical_json() == again.canonical_json()
    view = orjson.loads(first.canonical_json())
    without_hash = orjson.dumps({k: v for k, v in view.items() if k != "diagnosis_hash"}, option=orjson.OPT_SORT_KEYS)
    assert view["diagnosis_hash"] == hashlib.sha256(without_hash).hexdigest() == again.diagnosis_hash
    assert recorded_profile(view) == profile
    assert (diagnose(events, other).diagnosis_hash == first.diagnosis_hash) == (other == profile)
