"""The store-side CLI: through a running server (which owns the embedded store), and on its own."""

import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import orjson
from typer.testing import CliRunner

from service.cli import app as cli
from service.testing.live import free_port, server_log, start_server_process
from tests.conftest import FIXTURES


def _invoke(*args: str):
    return CliRunner().invoke(cli, list(args))


def _fixture_dir(tmp_path: Path) -> Path:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    for fixture in FIXTURES.glob("session_*.json"):
        shutil.copy(fixture, sessions)
    (sessions / "broken.json").write_text('{"identity": "x", "events": [1, 2]}')
    return sessions


def test_ingest_runs_reputation_summary_and_gate_through_the_server(cli_as, tenant: str, tmp_path: Path) -> None:
    cli_as(tenant)
    sessions = _fixture_dir(tmp_path)
    ingested = _invoke("ingest", str(sessions), str(FIXTURES / "otlp_claude_code.jsonl"))
    assert ingested.exit_code == 2, ingested.output  # one file failed: the others are stored
    assert "6 files: 6 runs stored, 0 already present, 1 file failed" in ingested.stderr
    assert "broken.json (events[0])" in ingested.stderr
    header, *listed = [line.split("\t") for line in ingested.stdout.splitlines()]  # TSV: stdout is no terminal
    assert header == ["run_id", "identity", "trust", "readiness", "primary_failure", "tool_calls", "outcome", "stored"]
    assert sorted((row[0], row[1], row[2], row[7]) for row in listed) == [
        ("run-clean-001", "agent-atlas", "100", "new"), ("run-infra-004", "agent-atlas", "", "new"),
        ("run-loop-002", "agent-borealis", "90", "new"), ("run-multi-003", "agent-atlas", "89", "new"),
        ("sess-a1", "claude-code", "100", "new"), ("sess-b2", "claude-code", "100", "new"),
    ]  # fmt: skip
    again = _invoke("ingest", "--quiet", str(sessions))
    assert again.stdout == "5 files: 0 runs stored, 4 already present, 1 file failed\n"
    as_json = orjson.loads(_invoke("ingest", "--json", str(sessions)).stdout)
    assert {key: as_json[key] for key in ("files", "stored", "existing", "failed")} == {
        "files": 5, "stored": 0, "existing": 4, "failed": 1,
    }  # fmt: skip
    assert sorted((run["run_id"], run["created"]) for run in as_json["runs"]) == [
        ("run-clean-001", False), ("run-infra-004", False), ("run-loop-002", False), ("run-multi-003", False),
    ]  # fmt: skip

    runs = orjson.loads(_invoke("runs", "--json", "--limit", "100").stdout)
    by_id = {run["run_id"]: run for run in runs}
    assert set(by_id) == {"run-clean-001", "run-loop-002", "run-multi-003", "run-infra-004", "sess-a1", "sess-b2"}
    assert by_id["run-infra-004"]["execution_status"] == "execution_error"
    assert by_id["run-loop-002"]["readiness_level"] == "unsafe_for_production"
    assert by_id["sess-a1"]["session_composite"] == 8.7
    table = _invoke("runs", "--identity", "agent-atlas")
    assert table.exit_code == 0 and "run-multi-003" in table.stdout and "run-loop-002" not in table.stdout

    reputation = orjson.loads(_invoke("reputation", "agent-atlas", "--as-of", "2026-11-20", "--json").stdout)
    assert reputation["events"] == 2  # the clean and the multi run; the infra error does not count
    assert _invoke("reputation", "nobody-here").exit_code == 1
    in_its_window = _invoke("reputation", "agent-borealis", "--as-of", "2026-11-20").stdout
    long_after = _invoke("reputation", "agent-borealis", "--as-of", "2027-06-01").stdout
    assert "runs 1," in in_its_window and "no longer count" not in in_its_window
    assert "runs 0," in long_after and (
        "nothing of agent-borealis in the 90 days to 2027-06-01: older runs and signals no longer count" in long_after
    )  # why an agent the store holds is missing from the fleet (issue #41)

    summary = _invoke("summary", "--suite", "customs-evals")
    assert summary.exit_code == 0
    assert summary.stdout.startswith("Total tests: 3\nPassed: 2\nQuality failures: 0\nExecution errors: 1\n")
    assert "  setup: 1" in summary.stdout and "  toolchain_missing: 1" in summary.stdout

    assert _invoke("gate", "--run", "run-clean-001", "--min-trust", "80").exit_code == 0
    unsafe = _invoke("gate", "--run", "run-loop-002", "--min-trust", "10")
    assert unsafe.exit_code == 1 and "unsafe_for_production" in unsafe.stdout
    review = _invoke("gate", "--run", "run-multi-003", "--min-trust", "80")
    assert review.exit_code == 1 and "--allow-review" in review.stdout
    assert _invoke("gate", "--run", "run-multi-003", "--min-trust", "80", "--allow-review").exit_code == 0
    rate = _invoke("gate", "--suite", "customs-evals", "--max-execution-error-rate", "0.2")
    assert rate.exit_code == 1 and "1/3" in rate.stdout
    assert _invoke("gate", "--suite", "customs-evals", "--max-execution-error-rate", "0.5").exit_code == 0


def test_keys_create_makes_a_key_of_the_callers_tenant(cli_as, tenant: str) -> None:
    cli_as(tenant, ("admin",))
    created = _invoke("keys", "create", "--scope", "read", "--json")
    assert created.exit_code == 0, created.output
    assert orjson.loads(created.stdout)["tenant"] == tenant


def test_gate_offline_and_usage_errors() -> None:
    assert _invoke("gate", str(FIXTURES / "session_clean.json"), "--min-trust", "90").exit_code == 0
    failing = _invoke("gate", str(FIXTURES / "session_infra_error.json"), "--min-trust", "10")
    assert failing.exit_code == 1 and "execution error (setup/toolchain_missing)" in failing.stdout
    assert _invoke("gate", "--min-trust", "50").exit_code == 2
    assert _invoke("gate", "/no/such/file.json").exit_code == 2


def _run(data_dir: Path, *args: str, settings: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, **(settings or {}), "REPUTE_DATA_DIR": str(data_dir)}
    env.pop("REPUTE_API_KEY", None)
    return subprocess.run([sys.executable, "-m", "service", *args], env=env, capture_output=True, text=True)


def test_commands_open_the_store_directly_when_no_server_runs(tmp_path: Path) -> None:
    data_dir = tmp_path / "own"
    first, second = _run(data_dir, "migrate"), _run(data_dir, "migrate")
    assert first.returncode == 0 and "applied: 0001_runs" in first.stdout
    assert second.returncode == 0 and "schema is up to date" in second.stdout
    ingested = _run(data_dir, "ingest", str(_fixture_dir(tmp_path)))
    assert ingested.returncode == 2 and "4 runs stored" in ingested.stderr, ingested.stderr
    runs = orjson.loads(_run(data_dir, "runs", "--json").stdout)
    assert len(runs) == 4
    created = orjson.loads(_run(data_dir, "keys", "create", "--scope", "read", "--tenant", "acme", "--json").stdout)
    assert created["key"].startswith("rpt_") and created["scopes"] == ["read"]
    listed = orjson.loads(_run(data_dir, "keys", "list", "--json").stdout)
    assert [k["id"] for k in listed] == [created["id"]] and "key" not in listed[0]
    assert _run(data_dir, "keys", "revoke", created["id"]).returncode == 0
    assert _run(data_dir, "keys", "revoke", created["id"]).returncode == 1


README = Path(__file__).resolve().parents[1] / "README.md"


def readme_exit_codes() -> dict[int, str]:
    """The README's exit-code table: code -> meaning."""
    table = README.read_text().split("Exit codes, the same for every command:", 1)[1].split("\n\n")[1]
    return {int(code): meaning for code, meaning in re.findall(r"^\| (\d+) \| (.+) \|$", table, re.MULTILINE)}


def readme_exit_code(words: str) -> int:
    """The code whose meaning in the README says `words`."""
    [code] = [code for code, meaning in readme_exit_codes().items() if words in meaning]
    return code


def test_the_readmes_exit_codes_are_the_clis() -> None:
    assert sorted(readme_exit_codes()) == [0, 1, 2]
    assert _invoke("diagnose", str(FIXTURES / "session_clean.json")).exit_code == readme_exit_code("done")
    failing = _invoke("gate", str(FIXTURES / "session_loop.json"), "--min-trust", "10")
    assert failing.exit_code == readme_exit_code("a gate that fails")
    assert _invoke("gate", "--min-trust", "50").exit_code == readme_exit_code("a usage error")
    # a store or server that refused: a second `repute serve`, in the test below


def _serve_second(data_dir: Path) -> subprocess.CompletedProcess:
    """A second `repute serve` on a data directory that a running server owns: it must not stay up."""
    env = {**os.environ, "REPUTE_DATA_DIR": str(data_dir)}
    command = [sys.executable, "-m", "service", "serve", "--port", str(free_port())]
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        output, _ = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    return subprocess.CompletedProcess(command, process.returncode, output, "")


def test_only_one_server_owns_a_data_directory_and_its_record_names_it(tmp_path: Path) -> None:
    data_dir, port = tmp_path / "owned", free_port()
    owner = start_server_process(data_dir, port)
    record = data_dir / "server.json"
    try:
        second = _serve_second(data_dir)
        lines = [line for line in second.stdout.splitlines() if line.strip()]
        # the README's code: it exited 1 before issue #28
        assert second.returncode == readme_exit_code("a store or server that refused"), second.returncode
        assert len(lines) == 1 and lines[0].startswith("error: ") and "in use by another process" in lines[0], lines
        assert orjson.loads(record.read_bytes()) == {
            "url": f"http://127.0.0.1:{port}", "pid": owner.pid, "data_dir": str(data_dir.resolve()),
        }  # fmt: skip

        through_server = _run(data_dir, "runs", "--json")
        assert through_server.returncode == 0 and orjson.loads(through_server.stdout) == []
        record.rename(tmp_path / "hidden.json")  # a CLI that cannot find the owner opens the store itself
        locked = _run(data_dir, "runs", "--json")
        (tmp_path / "hidden.json").rename(record)
        assert locked.returncode == 2
        assert locked.stderr.startswith("error: ") and "in use by another process" in locked.stderr
        assert "Code: 76" not in locked.stderr and len(locked.stderr.strip().splitlines()) == 1, locked.stderr
    finally:
        owner.send_signal(signal.SIGTERM)
        owner.wait(timeout=30)
    assert not record.exists()


def _output_of_a_start(data_dir: Path) -> str:
    log = server_log(data_dir)
    before = log.stat().st_size if log.exists() else 0
    server = start_server_process(data_dir, free_port())
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=30)
    return log.read_bytes()[before:].decode()


def test_the_admin_key_is_printed_once_when_created(tmp_path: Path) -> None:
    data_dir = tmp_path / "keyed"
    first = _output_of_a_start(data_dir)
    key = (data_dir / "admin.key").read_text().strip()
    assert key in first
    assert key not in _output_of_a_start(data_dir)


# What an edit of 0001_runs.sql after it was applied looks like to the store: another recorded checksum.
RECORD_ANOTHER_CHECKSUM = """
import sys
from service.settings import Settings
from service.store.client import Store
store = Store(Settings(data_dir=sys.argv[1]))
store.client.insert("schema_migrations", [[1, "0001_runs", "0" * 64]], column_names=["version", "name", "checksum"])
store.close()
"""


def test_migrate_stops_on_an_applied_migration_changed_since(tmp_path: Path) -> None:
    data_dir = tmp_path / "changed"
    assert _run(data_dir, "migrate").returncode == 0
    # Settings are rendered into the DDL, but the checksum is the file's: changing one is no edit.
    retuned = _run(data_dir, "migrate", settings={"REPUTE_RUN_EVENTS_TTL_DAYS": "7"})
    assert retuned.returncode == 0 and "schema is up to date" in retuned.stdout
    subprocess.run([sys.executable, "-c", RECORD_ANOTHER_CHECKSUM, str(data_dir)], check=True)
    changed = _run(data_dir, "migrate")
    assert changed.returncode != 0
    [line] = changed.stderr.splitlines()
    assert line.startswith("error: migration 0001_runs.sql was changed after it was applied")
