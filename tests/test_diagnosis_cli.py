"""`repute diagnose FILE|-` through a real process: canonical JSON, --text, and exit 2 on bad input."""

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from service.diagnosis import FAILURE_TYPES, diagnose, parse_run
from tests.conftest import FIXTURES

REPO = Path(__file__).resolve().parents[1]


def _run(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "service", "diagnose", *args], input=stdin, capture_output=True, cwd=REPO, timeout=60
    )


def test_prints_the_canonical_json() -> None:
    path = FIXTURES / "session_loop.json"
    done = _run(str(path))
    assert done.returncode == 0, done.stderr
    expected = diagnose(parse_run(path.read_bytes()).events).canonical_json()
    assert done.stdout == expected + b"\n"
    assert orjson.loads(done.stdout)["trust_score"] == 90


def test_reads_stdin() -> None:
    ndjson = b'{"event": "tool_call", "tool": "t"}\n{"event": "tool_output", "used": false}\n'
    done = _run("-", stdin=ndjson)
    assert done.returncode == 0, done.stderr
    assert orjson.loads(done.stdout)["failure_causes"][0]["type"] == "ignoring_tool_outputs"


def test_text_report() -> None:
    done = _run("--text", str(FIXTURES / "session_multi.json"))
    assert done.returncode == 0, done.stderr
    text = done.stdout.decode()
    assert text.splitlines()[:2] == ["outcome: ok (score 0.890)", "trust 89/100  review_recommended"]
    assert "trust 89/100" in text and "review_recommended" in text
    assert "primary: skill_failure (high, impact -20)" in text
    assert "skill_available -> skill_not_selected_or_failed -> generic_execution" in text
    assert "- memory_degradation: medium, impact -18, 2 evidence events" in text
    assert text.count("remediation:") == 4


def test_text_report_of_an_execution_error_leads_with_it_and_gives_no_trust_verdict() -> None:
    done = _run("--text", str(FIXTURES / "session_infra_error.json"))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.decode().splitlines()
    assert lines[:2] == [
        "outcome: execution_error at stage setup, reason toolchain_missing",
        "  message: dotnet: command not found",
    ]
    assert lines[2].startswith("no trust verdict:")
    assert lines[3].startswith("events: 3 (tool calls 0, retries 0, errors 1)")
    text = "\n".join(lines)
    assert "trust 100/100" not in text and "ready_for_runtime" not in text and "primary:" not in text


def _write(tmp_path: Path, run: dict) -> str:
    path = tmp_path / "run.json"
    path.write_bytes(orjson.dumps(run))
    return str(path)


def test_text_report_of_a_declared_execution_error_escapes_its_message(tmp_path: Path) -> None:
    execution = {"status": "execution_error", "stage": "agent", "reason": "Provider_Error", "message": "503\ntrust 100"}
    done = _run("--text", _write(tmp_path, {"events": [{"event": "decision"}], "execution": execution}))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.decode().splitlines()
    assert lines[:2] == ["outcome: execution_error at stage agent, reason provider_error", "  message: 503\\ntrust 100"]
    assert not any(line.startswith("trust") for line in lines)


def test_text_report_of_an_unsafe_run_is_a_quality_failure(tmp_path: Path) -> None:
    loop = [{"event": "tool_call", "tool": "search", "args": {"q": "x"}}] * 5  # critical: unsafe at trust 90
    done = _run("--text", _write(tmp_path, {"events": loop}))
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().splitlines()[:2] == [
        "outcome: quality_failure (score 0.900)",
        "trust 90/100  unsafe_for_production",
    ]
    scored = _run("--text", _write(tmp_path, {"events": loop, "execution": {"score": 0.9}}))
    assert scored.stdout.decode().splitlines()[0] == "outcome: ok (score 0.900)"


def test_text_report_refuses_a_forged_reason(tmp_path: Path) -> None:
    staged = {"event": "error_event", "stage": "agent", "reason": "provider_error: 1\nPassed: 999"}
    _assert_one_line_error(_run("--text", _write(tmp_path, {"events": [staged]})), "events[0].reason")
    declared = {"status": "execution_error", "stage": "lunch"}
    _assert_one_line_error(_run("--text", _write(tmp_path, {"events": [], "execution": declared})), "execution.stage")


BAD_INPUT = {
    "not_json": (b"{oops", "not JSON"),
    "scalar": (b"42", "got a number"),
    "events_not_objects": (b"[1, 2]", "events[0]"),
    "nan": (b'[{"event": "x", "v": NaN}]', "not JSON"),
    "timestamp_1e30": (b'[{"event": "x", "timestamp": 1e30}]', "events[0].timestamp"),
    "tokens_1e30": (b'[{"event": "token_usage", "total_tokens": 1e30}]', "events[0].total_tokens"),
    "string_timestamp": (b'[{"event": "x", "timestamp": "later"}]', "events[0].timestamp"),
    "deep": (b"[" * 500 + b"]" * 500, "deeper than 64"),
    "empty": (b"", "empty"),
}


@pytest.mark.parametrize("case", BAD_INPUT, ids=list(BAD_INPUT))
def test_bad_input_exits_2_with_one_line(case: str, tmp_path: Path) -> None:
    body, words = BAD_INPUT[case]
    path = tmp_path / f"{case}.json"
    path.write_bytes(body)
    done = _run(str(path))
    _assert_one_line_error(done, words)


def test_missing_file_exits_2(tmp_path: Path) -> None:
    _assert_one_line_error(_run(str(tmp_path / "nope.json")), "cannot read")


def test_bad_stdin_exits_2() -> None:
    _assert_one_line_error(_run("--text", "-", stdin=b"[1]"), "events[0]")


def _assert_one_line_error(done: subprocess.CompletedProcess[bytes], words: str) -> None:
    stderr = done.stderr.decode()
    assert done.returncode == 2, stderr
    assert done.stdout == b""
    assert "Traceback" not in stderr
    assert len(stderr.strip().splitlines()) == 1, stderr
    assert words in stderr


def _coding_run(tmp_path: Path, **fields: object) -> str:
    """A clean run of 17,680 tokens: a cost_explosion under critiqor, nothing under long-session."""
    events = [{"event": "token_usage", "total_tokens": 3_536} for _ in range(5)]
    return _write(tmp_path, {"events": events, **fields})


def test_profile_names_a_built_in_profile_or_a_file_of_thresholds(tmp_path: Path) -> None:
    run = _coding_run(tmp_path)
    assert "profile" not in orjson.loads(_run(run).stdout)  # critiqor, Critiqor's bytes
    long = orjson.loads(_run("--profile", "long-session", run).stdout)
    assert long["profile"]["name"] == "long-session" and long["failure_causes"] == []
    named = orjson.loads(_run(_coding_run(tmp_path, profile="long-session")).stdout)  # the run's own
    assert named == long
    assert (
        orjson.loads(_run("--profile", "critiqor", _coding_run(tmp_path, profile="long-session")).stdout)[
            "failure_causes"
        ][0]["type"]
        == "cost_explosion"
    )  # --profile before the run's own

    thresholds = {"tokens_high": 10_000, "tokens_critical": 15_000, "tokens_per_point": 1_000, "duplicates": 3}
    tight = tmp_path / "tight.json"
    tight.write_bytes(orjson.dumps(thresholds))
    judged = orjson.loads(_run("--profile", str(tight), run).stdout)
    assert judged["profile"] == {"name": "tight", **thresholds, "detectors": sorted(FAILURE_TYPES)}  # default: all
    assert [(c["severity"], c["impact_score"]) for c in judged["failure_causes"]] == [("critical", -27)]

    text = _run("--text", "--profile", "long-session", run).stdout.decode().splitlines()
    assert text[-1] == (
        "profile long-session: cost_explosion from 200,000 tokens (critical from 1,000,000, one impact point per"
        " 100,000) or 3 duplicate calls"
    )


def test_an_unknown_profile_exits_2_with_one_line(tmp_path: Path) -> None:
    run = _coding_run(tmp_path)
    _assert_one_line_error(_run("--profile", "coding", run), "neither a built-in profile")
    _assert_one_line_error(_run(_coding_run(tmp_path, profile="coding")), "profile: 'coding' is not a built-in")
    bad = tmp_path / "bad.json"
    bad.write_bytes(orjson.dumps({"tokens_high": 10, "tokens_critical": 5, "tokens_per_point": 1, "duplicates": 3}))
    _assert_one_line_error(_run("--profile", str(bad), run), "tokens_critical")
    bad.write_bytes(b"[1]")
    _assert_one_line_error(_run("--profile", str(bad), run), "a JSON object")
