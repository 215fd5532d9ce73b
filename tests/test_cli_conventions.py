"""What every `repute` command shares: help without type placeholders, --version and shell completion,
choices that are listed and checked, listings that never cut an id (TSV when piped), and one exit-code
convention (0 done, 1 a negative answer, 2 a usage or input error)."""

import io
import logging
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import click
import orjson
import pytest
import typer
from rich.console import Console
from typer.testing import CliRunner

from service import __version__
from service.cli import app as cli
from service.cli import runs as cli_runs
from service.diagnosis.failure_types import FailureType
from service.reputation.model import ReputationEvent
from service.store import reputation as reputation_store
from service.store.client import Store
from service.terminal import print_table
from service.vocab import ExecutionStatus, InputKind, Readiness, RunStatus, Scope
from tests.conftest import FIXTURES

# The rule: help names what a value is (FILE, N, IDENTITY, or the choices themselves) and never shows a
# type placeholder, neither Typer's `<bool>` / `<str>` / `<int range>` / `<list[Path]>` nor Click's bare
# TEXT / INTEGER / FLOAT / BOOLEAN / PATH.
PLACEHOLDER = re.compile(r"<[^<>\s]+(?: range)?>|\b(?:TEXT|INTEGER|FLOAT|BOOLEAN|PATH)\b")
WIDE_TERMINAL = {"COLUMNS": "250", "TERMINAL_WIDTH": "250"}
LONG_ID = "run-" + "x" * 120 + "-end"


def _invoke(*args: str, **env: str):
    return CliRunner().invoke(cli, list(args), env=env or None)


def _commands(group: click.Group, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    yield path, group
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            yield from _commands(command, (*path, name))
        else:
            yield (*path, name), command


COMMANDS = list(_commands(typer.main.get_command(cli)))


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[" ".join(p) or "repute" for p, _ in COMMANDS])
def test_help_shows_no_type_placeholder(path: tuple[str, ...], command: click.Command) -> None:
    shown = _invoke(*path, "--help", **WIDE_TERMINAL)
    assert shown.exit_code == 0, shown.output
    assert PLACEHOLDER.findall(shown.output) == [], shown.output
    for param in command.params:
        takes_a_value = not getattr(param, "is_flag", False)
        if takes_a_value:
            assert param.metavar, f"{' '.join(path)} {param.name}: give it a metavar"


def test_version_and_shell_completion(monkeypatch: pytest.MonkeyPatch) -> None:
    version = _invoke("--version")
    assert version.exit_code == 0 and version.stdout == f"repute {__version__}\n"
    root = _invoke("--help", **WIDE_TERMINAL).output
    assert "--install-completion" in root and "--show-completion" in root
    # Typer's --show-completion is a flag: the script is for the shell it detects among the process's
    # ancestors, which under `make test` is make's /bin/sh (not one Typer supports), so bash is the one here.
    monkeypatch.setattr(typer.completion, "_get_shell_name", lambda: "bash")
    script = _invoke("--show-completion")
    assert script.exit_code == 0 and "complete" in script.stdout


@pytest.mark.parametrize(
    ("option", "choice"),
    [("--readiness", "unsafe_for_production"), ("--execution-status", "execution_error"), ("--status", "open"),
     ("--primary-failure", "cost_explosion")],
)  # fmt: skip
def test_choices_are_listed_and_checked(option: str, choice: str) -> None:
    assert choice in _invoke("runs", "--help", **WIDE_TERMINAL).output
    refused = _invoke("runs", option, "bogus")
    assert refused.exit_code == 2 and choice in refused.output


def _stored_long_runs(cli_as, tenant: str, tmp_path: Path) -> None:
    cli_as(tenant)
    session = orjson.loads((FIXTURES / "session_multi.json").read_bytes())
    files = tmp_path / "long"
    files.mkdir()
    for index, run_id in enumerate((LONG_ID, "run-infra-004")):
        source = session if index == 0 else orjson.loads((FIXTURES / "session_infra_error.json").read_bytes())
        (files / f"{index}.json").write_bytes(
            orjson.dumps({**source, "run_id": run_id, "identity": "agent-" + "y" * 90})
        )
    assert _invoke("ingest", str(files)).exit_code == 0


def test_piped_listings_are_tsv_with_whole_ids(cli_as, tenant: str, tmp_path: Path) -> None:
    _stored_long_runs(cli_as, tenant, tmp_path)
    listing = _invoke("runs")
    assert listing.exit_code == 0 and "…" not in listing.stdout
    header, *lines = listing.stdout.splitlines()
    assert header.split("\t") == [
        "run_id",
        "identity",
        "trust",
        "readiness",
        "primary_failure",
        "tool_calls",
        "outcome",
    ]
    rows = {line.split("\t")[0]: line.split("\t") for line in lines}
    assert set(rows) == {LONG_ID, "run-infra-004"}
    assert rows[LONG_ID][1] == "agent-" + "y" * 90 and rows[LONG_ID][2] == "89"
    infra = rows["run-infra-004"]
    assert infra[2:5] == ["", "", ""] and infra[6] == "execution error (setup/toolchain_missing)"

    keys = _invoke("keys", "list")
    assert keys.exit_code == 0 and keys.stdout.startswith("id\ttenant\tscopes\tname\tcreated_at\trevoked_at\n")
    assert "…" not in keys.stdout
    key_ids = {line.split("\t")[0] for line in keys.stdout.splitlines()[1:]}
    assert key_ids == {key["id"] for key in orjson.loads(_invoke("keys", "list", "--json").stdout)}
    for listing_json in (("runs", "--json"), ("alerts", "--json"), ("keys", "list", "--json"), ("status", "--json")):
        assert orjson.loads(_invoke(*listing_json).stdout) is not None, listing_json


def test_piped_cells_that_a_spreadsheet_would_run_are_text() -> None:
    """OWASP's rule against CSV injection: a text cell starting with = + - @, tab or CR gets a leading '.
    Fails without terminal.FORMULA_STARTS (issue #28)."""
    buffer = io.StringIO()  # not a terminal: TSV
    cells = ["=cmd|' /C calc'!A0", "+1", "-x", "@SUM(A1)", "\tx", "\r=1", "  =1", "tx-9", -3.5, 7, None]
    print_table(Console(file=buffer), ("cell",), [[cell] for cell in cells])
    assert buffer.getvalue().splitlines() == [
        "cell", "'=cmd|' /C calc'!A0", "'+1", "'-x", "'@SUM(A1)", "'x", "'=1", "'=1", "tx-9", "-3.5", "7", "",
    ]  # fmt: skip


def test_a_formula_stored_before_the_reference_rule_reaches_a_pipe_as_text(
    cli_as, embedded_store: Store, tenant: str
) -> None:
    """A reference stored before signals' references had a rule (issue #28), listed by `reputation --explain`."""
    formula = "=cmd|' /C calc'!A0"
    signal = ReputationEvent(uuid.uuid4(), datetime.now(UTC), "agent-f", "economic", "payment_failed", -1.0,
                             reference_type="transaction", reference_id=formula)  # fmt: skip
    reputation_store.insert_signals(embedded_store, tenant, "key-old", [signal], datetime.now(UTC))
    cli_as(tenant)
    shown = _invoke("reputation", "agent-f", "--explain")
    assert shown.exit_code == 0, shown.output
    [line] = [line for line in shown.stdout.splitlines() if line.startswith("transaction\t")]
    assert line.startswith(f"transaction\t'{formula}\t\t1\t-1.0\t")


def test_status_through_the_server(cli_as, tenant: str, tmp_path: Path, base_url: str) -> None:
    _stored_long_runs(cli_as, tenant, tmp_path)
    shown = _invoke("status")
    assert shown.exit_code == 0, shown.output
    rows = dict(line.split("\t") for line in shown.stdout.splitlines()[1:])
    assert rows["server"].startswith(f"running at {base_url}") and rows["store"].startswith("reachable")
    assert (
        rows["runs"] == "2 (1 identities)" and rows["tenant"] == tenant and rows["migrations"].endswith("none pending")
    )
    report = orjson.loads(_invoke("status", "--json").stdout)
    assert report["runs"] == 2 and report["identities"] == 1 and report["last_finalized_at"]
    assert report["server"] == {"running": True, "url": base_url}


def test_exit_codes(cli_as, tenant: str, tmp_path: Path) -> None:
    cli_as(tenant)
    negative = [
        ("reputation", "nobody"), ("gate", "--run", "no-such-run"), ("keys", "revoke", "no-such-key"),
        ("summary", "--suite", "no-such-suite"), ("gate", "--suite", "none", "--max-execution-error-rate", "0.5"),
    ]  # fmt: skip
    for args in negative:
        done = _invoke(*args)
        assert done.exit_code == 1 and done.stderr.startswith("error: "), (args, done.output)
    usage = [("runs", "--limit", "0"), ("gate",), ("reputation", "x", "--as-of", "yesterday"), ("nonsense",)]
    for args in usage:
        assert _invoke(*args).exit_code == 2, args


def test_a_conflicting_file_fails_alone(cli_as, tenant: str, tmp_path: Path) -> None:
    cli_as(tenant)
    files = tmp_path / "runs"
    files.mkdir()
    multi = orjson.loads((FIXTURES / "session_multi.json").read_bytes())
    (files / "a.json").write_bytes(orjson.dumps(multi))
    assert _invoke("ingest", str(files)).exit_code == 0
    (files / "b.json").write_bytes(orjson.dumps({**multi, "identity": "agent-other"}))  # same run_id, other agent
    (files / "c.json").write_bytes(orjson.dumps({**multi, "run_id": "run-new"}))
    again = _invoke("ingest", str(files))
    assert again.exit_code == 2
    assert "1 run stored, 1 already present, 1 file failed" in again.stderr
    assert "b.json" in again.stderr and "409" in again.stderr


def _cli(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "REPUTE_DATA_DIR": str(data_dir)}
    env.pop("REPUTE_API_KEY", None)
    return subprocess.run(
        [sys.executable, "-m", "service", *args], env=env, capture_output=True, text=True, timeout=120
    )


def test_a_store_that_cannot_be_opened_is_one_line(tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    (broken / "clickhouse").mkdir(parents=True)
    (broken / "clickhouse" / "metadata").write_text("a file where the engine wants a directory")
    not_a_directory = tmp_path / "file"
    not_a_directory.write_text("")
    for data_dir in (broken, not_a_directory / "below"):
        for args in (("runs",), ("migrate",), ("status",)):
            done = _cli(data_dir, *args)
            assert done.returncode in (1, 2), (args, done.stderr)
            lines = done.stderr.strip().splitlines() if args != ("status",) else []
            assert len(lines) <= 1 and "Traceback" not in done.stderr and "DB::Exception" not in done.stderr, done
            assert "DB::Exception" not in done.stdout and "Traceback" not in done.stdout
    status = _cli(broken, "status")
    assert status.returncode == 1 and "unreachable" in status.stdout


def test_library_errors_are_one_line_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    from service.terminal import quiet_library_logs

    quiet_library_logs()
    quiet_library_logs()  # idempotent: one handler
    try:
        raise RuntimeError("Code: 76. DB::Exception: Cannot open file\nstack trace")
    except RuntimeError:
        logging.getLogger("repute.api").exception("unhandled error on GET /v1/runs")
    assert capsys.readouterr().err == "error: unhandled error on GET /v1/runs\n"


CHOICE_OPTIONS = [(("runs",), enum) for enum in (Readiness, ExecutionStatus, FailureType, RunStatus)] + [
    (("keys", "create"), Scope), (("profiles", "set"), InputKind), (("profiles", "rules"), InputKind),
]  # fmt: skip


@pytest.mark.parametrize(("path", "enum"), CHOICE_OPTIONS, ids=lambda v: v.__name__ if isinstance(v, type) else None)
def test_help_on_a_narrow_terminal_never_breaks_a_choice(path: tuple[str, ...], enum: type) -> None:
    shown = _invoke(*path, "--help", COLUMNS="80", TERMINAL_WIDTH="80")
    assert shown.exit_code == 0, shown.output
    words = set(re.findall(r"[\w-]+", shown.output))
    assert {str(value) for value in enum} <= words, shown.output


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _on_terminal(width: int, columns: tuple[str, ...], rows: list[tuple], ids: tuple[str, ...]) -> list[str]:
    screen = _Terminal()
    print_table(Console(file=screen, width=width, color_system=None), columns, rows, ids=ids)
    return screen.getvalue().splitlines()


def test_a_table_on_a_terminal_wraps_between_words() -> None:
    """On 80 columns every word of every cell stays whole (values read as words: underscores as spaces),
    and no line is wider than the terminal; ids are shown as they are. Fails with Rich's own folding."""
    rows = [
        ("run-multi-003", "agent-atlas", 89, "review_recommended", "ignoring_tool_outputs", 7, "quality failure"),
        ("run-loop-002", "agent-orion", 74, "unsafe_for_production", "infinite_tool_loop", 9, "quality failure"),
        ("run-clean-001", "agent-atlas", 100, "ready_for_runtime", None, 4, "ok"),
    ]
    lines = _on_terminal(80, cli_runs.RUN_COLUMNS, rows, ("run_id", "identity"))
    assert max(len(line) for line in lines) <= 80
    words = {word for line in lines for word in line.split()}
    for row in rows:
        for cell in row:
            assert cell is None or set(str(cell).replace("_", " ").split()) <= words, (cell, lines)
    assert "run-multi-003" in words and "agent-orion" in words  # ids as they are


def test_runs_page_by_cursor_or_all_and_say_when_more_are_left(cli_as, client, tenant: str) -> None:
    runs = [{"run_id": f"page-{i}", "identity": "agent-pager", "events": [{"event": "decision"}]} for i in range(5)]
    assert client.post("/v1/sessions/batch", json=runs).status_code == 201
    listed = [run["run_id"] for run in client.get("/v1/runs", params={"limit": 5}).json()["runs"]]
    cli_as(tenant)
    first = _invoke("runs", "--limit", "2", "--json")
    assert [run["run_id"] for run in orjson.loads(first.stdout)] == listed[:2]
    [hint] = first.stderr.splitlines()
    cursor = re.search(r"--cursor (\S+)", hint)
    assert hint.startswith("more runs: the next 2 with --cursor") and cursor, hint
    second = _invoke("runs", "--limit", "2", "--cursor", cursor[1], "--json")
    assert [run["run_id"] for run in orjson.loads(second.stdout)] == listed[2:4]
    every = _invoke("runs", "--limit", "2", "--all")
    assert [line.split("\t")[0] for line in every.stdout.splitlines()[1:]] == listed
    assert every.stderr == ""  # nothing left
