"""What every `repute` command shares: help without type placeholders, --version and shell completion,
choices that are listed and checked, listings that never cut an id (TSV when piped), and one exit-code
convention (0 done, 1 a negative answer, 2 a usage or input error)."""

import logging
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import orjson
import pytest
import typer
from typer.testing import CliRunner

from service import __version__
from service.cli import app as cli
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


def test_version_and_shell_completion() -> None:
    version = _invoke("--version")
    assert version.exit_code == 0 and version.stdout == f"repute {__version__}\n"
    root = _invoke("--help", **WIDE_TERMINAL).output
    assert "--install-completion" in root and "--show-completion" in root
    # The script of the shell the command runs under, which Typer detects from the process tree: bash here,
    # whichever shell runs the tests (make runs them under sh, for which Typer has no script). Not the
    # last command of `bash -c`, so bash does not exec it in its own place.
    command = f'"{sys.executable}" -m service --show-completion; exit $?'
    script = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=120)
    assert script.returncode == 0 and "complete -o" in script.stdout, script.stderr


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
    assert "1 runs stored, 1 already present, 1 files failed" in again.stdout
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
