"""The session performance score (SPEC §5): the fixture, its encodings, the formulas' edges, files."""

from decimal import Decimal
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from service.judge import (
    IdentityRule,
    LogRecord,
    SessionAccumulator,
    decode_json_body,
    group_by_session,
    judge_log_file,
    score_session,
)
from service.judge import scan as scan_module
from service.judge.report import yaml_scalar
from tests.judge_support import (
    OTLP_LOG,
    SESSIONS,
    RecordEdit,
    attribute_values,
    edited_fixture,
    expected_yaml,
    fixture_lines,
    fixture_requests,
    record,
    write_jsonl,
)


def fixture_records() -> list[LogRecord]:
    return [record for line in fixture_lines() for record in decode_json_body(line).records]


def judged_yaml(path: Path, session: str, workers: int = 1) -> str:
    return judge_log_file(path, session, masque="Codesmith", workers=workers).score.to_yaml()


# --- encodings of the same facts give the same score -------------------------------------------


def cost_as_double(raw: dict[str, Any]) -> None:
    values = attribute_values(raw)
    if "cost_usd" in values:
        values["cost_usd"]["doubleValue"] = float(values["cost_usd"].pop("stringValue"))


def success_as_bool(raw: dict[str, Any]) -> None:
    values = attribute_values(raw)
    if "success" in values:
        values["success"]["boolValue"] = values["success"].pop("stringValue") == "true"


def ints_as_numbers(raw: dict[str, Any]) -> None:
    for value in attribute_values(raw).values():
        if "intValue" in value:
            value["intValue"] = int(value["intValue"])


def tokens_as_strings(raw: dict[str, Any]) -> None:
    for value in attribute_values(raw).values():
        if "intValue" in value:
            value["stringValue"] = value.pop("intValue")


def name_in_event_name(raw: dict[str, Any]) -> None:
    raw["eventName"] = raw.pop("body")["stringValue"]


def name_in_attribute(raw: dict[str, Any]) -> None:
    raw["attributes"].append({"key": "event.name", "value": raw.pop("body")})


def name_without_prefix(raw: dict[str, Any]) -> None:
    raw["body"]["stringValue"] = raw["body"]["stringValue"].removeprefix("claude_code.")


def time_only_observed(raw: dict[str, Any]) -> None:
    raw["timeUnixNano"] = "0"


def all_at_once(raw: dict[str, Any]) -> None:
    for edit in (cost_as_double, success_as_bool, ints_as_numbers, name_without_prefix, name_in_attribute):
        edit(raw)


@pytest.mark.parametrize(
    "edit",
    [
        cost_as_double,
        success_as_bool,
        ints_as_numbers,
        tokens_as_strings,
        name_in_event_name,
        name_in_attribute,
        name_without_prefix,
        time_only_observed,
        all_at_once,
    ],
)
@pytest.mark.parametrize("session", SESSIONS)
def test_every_encoding_gives_the_same_score(edit: RecordEdit, session: str, tmp_path: Path) -> None:
    log = write_jsonl(edited_fixture(edit), tmp_path / "variant.jsonl")
    assert judged_yaml(log, session) == expected_yaml(session)


@pytest.mark.parametrize("session", SESSIONS)
def test_score_dict_has_the_yaml_keys_and_numbers(session: str) -> None:
    score = judge_log_file(OTLP_LOG, session, masque="Codesmith", workers=1).score
    assert score.to_dict() == yaml.safe_load(expected_yaml(session))
    assert list(score.to_dict()) == list(yaml.safe_load(score.to_yaml()))


@pytest.mark.parametrize("session", SESSIONS)
def test_score_session_on_decoded_records_matches_the_file(session: str) -> None:
    records = group_by_session(fixture_records())[session]
    assert score_session(session, records, masque="Codesmith").to_yaml() == expected_yaml(session)


def test_fixture_numbers() -> None:
    score = score_session("sess-a1", group_by_session(fixture_records())["sess-a1"])
    assert score.duration_min == Decimal("6.6")  # 393 s = 6.55 min, half rounded away from zero
    assert score.total_cost == Decimal("0.133666")
    assert score.masque == "claude-code"


# --- the formulas' edges --------------------------------------------------------------------------


def session_of(tools: int, tools_ok: int, prompts: int, cache: int, tokens: int, minutes: int) -> SessionAccumulator:
    """A session of tool results, prompts and one API request spread over `minutes`."""
    session = SessionAccumulator("s")
    events = [record("user_prompt") for _ in range(prompts)]
    events += [record("tool_result", success=index < tools_ok) for index in range(tools)]
    events.append(record("api_request", input_tokens=tokens, output_tokens=0, cache_read_tokens=cache))
    events.append(record("api_request", second=60 * minutes))
    for event in events:
        session.add(event)
    return session


def test_recommendation_uses_the_unrounded_sum() -> None:
    near_keep = session_of(tools=4, tools_ok=4, prompts=1, cache=10, tokens=100, minutes=10).score()
    assert near_keep.composite == Decimal("7.0")  # 6.95 unrounded
    assert near_keep.recommendation == "review"
    near_review = session_of(tools=2, tools_ok=1, prompts=2, cache=50, tokens=100, minutes=10).score()
    assert (near_review.composite, near_review.recommendation) == (Decimal("4.0"), "doff")  # 3.95


def test_an_exact_seven_keeps() -> None:
    # 0.3·10 + 0.25·6 + 0.2·3 + 0.15·6 + 0.1·10 is 7 exactly; in floats it is 6.999999999999999
    score = session_of(tools=3, tools_ok=3, prompts=1, cache=60, tokens=100, minutes=10).score()
    assert [score.dimensions[name] for name in ("quality", "autonomy", "productivity", "token_efficiency")] == [
        Decimal("10.0"),
        Decimal("6.0"),
        Decimal("3.0"),
        Decimal("6.0"),
    ]
    assert (score.composite, score.recommendation) == (Decimal("7.0"), "keep")


def test_empty_session_defaults() -> None:
    score = SessionAccumulator("s").score()
    assert score.to_dict() == {
        "masque": "unknown",
        "session": "s",
        "duration_min": 1,
        "dimensions": {
            "quality": 0.0,
            "autonomy": 0.0,
            "productivity": 0.0,
            "token_efficiency": 0.0,
            "cost_efficiency": 10.0,
        },
        "composite": 1.0,
        "recommendation": "doff",
        "stats": {
            "total_cost": 0.0,
            "total_tools": 0,
            "tools_ok": 0,
            "tool_success_pct": 0,
            "prompts": 1,
            "total_tokens": 1,
            "cache_tokens": 0,
        },
    }


def test_dimensions_are_capped_and_cost_is_clamped_without_a_negative_zero() -> None:
    session = session_of(tools=30, tools_ok=30, prompts=1, cache=10**6, tokens=10, minutes=1)
    session.add(record("api_request", cost_usd="1000"))
    score = session.score()
    assert all(score.dimensions[name] == Decimal("10.0") for name in ("quality", "autonomy", "productivity"))
    assert score.dimensions["cost_efficiency"] == Decimal("0.0")
    assert "cost_efficiency: 0.0\n" in score.to_yaml()


def test_yaml_number_formats() -> None:
    session = session_of(tools=3, tools_ok=1, prompts=1, cache=0, tokens=10, minutes=0)
    session.add(record("api_request", cost_usd=0.125))
    text = session.score().to_yaml()
    assert "duration_min: 1\n" in text
    assert "  total_cost: 0.13\n" in text
    assert "  tool_success_pct: 33\n" in text


def test_unreadable_values_count_as_absent() -> None:
    session = SessionAccumulator("s")
    session.add(record("api_request", cost_usd="NaN", input_tokens="many", output_tokens=1e300, cache_read_tokens=None))
    session.add(record("api_request", cost_usd="1e-999999999", input_tokens="12.0", output_tokens=True))
    session.add(record("tool_result", success="TRUE "))
    session.add(record("tool_result", success="yes"))
    score = session.score()
    assert (score.total_cost, score.total_tokens, score.tools_ok) == (Decimal(0), 12, 1)


# --- identity -------------------------------------------------------------------------------------


def identity_of(*records: LogRecord, names: tuple[str, ...] | None = None) -> str:
    rule = IdentityRule(names) if names else IdentityRule()
    return score_session("s", records, identity_rule=rule).masque


def test_identity_prefers_the_first_attribute_of_the_list() -> None:
    resource = {"service.name": "claude-code"}
    assert identity_of(record("x", resource=resource)) == "claude-code"
    assert identity_of(record("x", resource=resource), record("x", masque="Codesmith")) == "Codesmith"
    assert identity_of(record("x", masque="m"), record("x", resource={"gen_ai.agent.id": "agent-7"})) == "agent-7"
    assert identity_of(record("x", **{"agent.id": 42}), record("x", **{"agent.id": "later"})) == "42"
    assert identity_of(record("x", masque="m", team="t"), names=("team", "masque")) == "t"
    assert identity_of(record("x", masque="")) == "unknown"


# --- accumulators merge; files scan in parallel ---------------------------------------------------


@pytest.mark.parametrize("cut", [0, 1, 7, 15])
def test_merging_two_parts_equals_one_pass(cut: int) -> None:
    records = group_by_session(fixture_records())["sess-a1"]
    whole, first, second = (SessionAccumulator("sess-a1") for _ in range(3))
    for index, item in enumerate(records):
        whole.add(item)
        (first if index < cut else second).add(item)
    first.merge(second)
    assert first.score() == whole.score()


def many_sessions_log(path: Path, copies: int) -> Path:
    requests = []
    for copy in range(copies):
        for line in fixture_lines():
            text = line.decode().replace("sess-", f"s{copy % 7}-").replace('"17636', f'"{17636 + copy}')
            requests.append(orjson.loads(text))
    return write_jsonl(requests, path)


def test_parallel_scan_equals_a_single_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = many_sessions_log(tmp_path / "many.jsonl", copies=60)
    monkeypatch.setattr(scan_module, "MIN_RANGE_BYTES", 64 * 1024)
    alone = judge_log_file(log, workers=1)
    assert judge_log_file(log, workers=2) == alone
    # s6 starts with copy 6, the latest first copy of the 7 sessions (0..6) of each fixture session
    assert (alone.sessions, alone.score.session) == (14, "s6-b2")


def test_an_escaped_session_id_is_still_found(tmp_path: Path) -> None:
    lines = fixture_lines()
    escaped = [lines[0].replace(b'"sess-a1"', b'"sess\\u002da1"'), *lines[1:]]
    log = tmp_path / "escaped.jsonl"
    log.write_bytes(b"\n".join(escaped) + b"\n")
    assert judged_yaml(log, "sess-a1") == expected_yaml("sess-a1")


def test_rejected_records_are_counted_not_scored(tmp_path: Path) -> None:
    requests = fixture_requests()
    first = requests[0]["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
    first.append({"timeUnixNano": "soon", "attributes": []})
    first.append({"attributes": [{"key": "session.id", "value": {"intValue": "not a number"}}]})
    first.append({"timeUnixNano": "1", "attributes": []})
    judgement = judge_log_file(write_jsonl(requests, tmp_path / "log.jsonl"), "sess-a1", masque="Codesmith")
    assert (judgement.rejected, judgement.unsessioned, judgement.sessions) == (2, 1, 2)
    assert judgement.score.to_yaml() == expected_yaml("sess-a1")


# --- YAML strings ---------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["Codesmith", "sess-a1", "yes", "No", "null", "~", "12", "1e3", "2024-01-01", "a: b"])
def test_yaml_strings_read_back_as_themselves(text: str) -> None:
    assert yaml.safe_load(f"key: {yaml_scalar(text)}")["key"] == text


@given(st.text())
def test_any_string_reads_back_as_itself(text: str) -> None:
    assert yaml.safe_load(f"key: {yaml_scalar(text)}\n")["key"] == text
