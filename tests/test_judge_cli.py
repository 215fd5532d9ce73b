"""`repute judge` end to end, as a user runs it."""

import subprocess
import sys
from pathlib import Path

import pytest

from tests.judge_support import OTLP_LOG, expected_yaml

REPO = Path(__file__).resolve().parents[1]


def judge(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "service", "judge", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )


def assert_one_line_error(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert result.returncode == 2
    assert result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in result.stderr


@pytest.mark.parametrize("session", ["sess-a1", "sess-b2"])
def test_prints_the_expected_yaml(session: str) -> None:
    result = judge(OTLP_LOG, "--session", session, "--masque", "Codesmith")
    assert result.returncode == 0, result.stderr
    assert result.stdout == expected_yaml(session)
    assert result.stderr == ""


def test_default_session_is_the_one_that_started_last() -> None:
    result = judge(OTLP_LOG, "--masque", "Codesmith")
    assert result.stdout == expected_yaml("sess-b2")


def test_default_masque_is_the_session_identity() -> None:
    result = judge(OTLP_LOG, "--session", "sess-a1")
    assert result.stdout == expected_yaml("sess-a1").replace("masque: Codesmith", "masque: claude-code")


def test_unknown_session_exits_2_with_one_line() -> None:
    assert_one_line_error(judge(OTLP_LOG, "--session", "nope"), "'nope'", "sess-a1")


def test_malformed_line_exits_2_naming_the_line(tmp_path: Path) -> None:
    log = tmp_path / "bad.jsonl"
    log.write_bytes(OTLP_LOG.read_bytes().splitlines(keepends=True)[0] + b'{"resourceLogs": [{"scopeLogs": 3}]}\n')
    assert_one_line_error(judge(log), "line 2")


def test_file_that_is_not_json_exits_2(tmp_path: Path) -> None:
    log = tmp_path / "binary.jsonl"
    log.write_bytes(bytes(range(256)) * 10)
    assert_one_line_error(judge(log), "line 1")


def test_missing_file_exits_2(tmp_path: Path) -> None:
    assert_one_line_error(judge(tmp_path / "absent.jsonl"), "absent.jsonl")


def test_log_without_sessions_exits_2(tmp_path: Path) -> None:
    log = tmp_path / "empty.jsonl"
    log.write_text("\n{}\n")
    assert_one_line_error(judge(log), "no session")
