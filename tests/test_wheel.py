"""The package as users get it: a wheel built from the checkout carries migrations/ and sql/, and installed
into a fresh virtualenv (dependencies from the package index) it migrates, serves and answers over HTTP
from a directory outside the source tree. Building and installing take about a minute."""

import os
import shutil
import socket
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import httpx
import orjson
import pytest

from tests.conftest import FIXTURES

ROOT = Path(__file__).resolve().parents[1]
PACKAGED_FOLDERS = ("migrations", "sql")  # top-level folders shipped as service/<folder>
READY_WITHIN_SECONDS = 180
LEFT_OUT_OF_THE_COPY = (".git", ".venv", "build", "dist", "*.egg-info", ".repute", "__pycache__", ".hypothesis")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built from a copy of the checkout without its build leftovers: setuptools reuses a `build/` folder,
    which would carry files removed or renamed since (a migration renumbered, say) into the wheel."""
    source, out = tmp_path_factory.mktemp("source") / "repute", tmp_path_factory.mktemp("wheel")
    shutil.copytree(ROOT, source, symlinks=True, ignore=shutil.ignore_patterns(*LEFT_OUT_OF_THE_COPY))
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", str(source), "-w", str(out)],
        check=True,
        capture_output=True,
    )
    [built] = out.glob("repute-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv (no system site-packages, so not the checkout's editable install) holding the wheel."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([venv / "bin" / "python", "-m", "pip", "install", "-q", str(wheel)], check=True, capture_output=True)
    return venv


def _env(data_dir: Path) -> dict[str, str]:
    """This environment without anything pointing at the checkout or another store."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("REPUTE_") and k != "PYTHONPATH"}
    return {**env, "REPUTE_DATA_DIR": str(data_dir)}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _run(venv: Path, workdir: Path, data_dir: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [venv / "bin" / "repute", *args], cwd=workdir, env=_env(data_dir), capture_output=True, text=True, timeout=300
    )


def test_the_wheel_carries_every_migration_and_query(wheel: Path) -> None:
    sources = [path for folder in PACKAGED_FOLDERS for path in (ROOT / folder).rglob("*") if path.is_file()]
    assert any(path.suffix == ".sql" for path in sources)
    with zipfile.ZipFile(wheel) as archive:
        packaged = set(archive.namelist())
        for path in sources:
            name = f"service/{path.relative_to(ROOT).as_posix()}"
            assert name in packaged, f"{name} is missing from {wheel.name}"
            assert archive.read(name) == path.read_bytes()


@contextmanager
def _serving(venv: Path, workdir: Path, data_dir: Path) -> Iterator[str]:
    """`repute serve` on a free loopback port until it is ready; stopped on exit."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    with (workdir / "serve.log").open("w") as log:
        server = subprocess.Popen(
            [venv / "bin" / "repute", "serve", "--host", "127.0.0.1", "--port", str(port)],
            cwd=workdir, env=_env(data_dir), stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            _wait_ready(server, url, workdir / "serve.log")
            yield url
        finally:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def _wait_ready(server: subprocess.Popen, url: str, log: Path) -> None:
    deadline = time.monotonic() + READY_WITHIN_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"repute serve exited with {server.returncode}:\n{log.read_text()}")
        try:
            if httpx.get(f"{url}/readyz", timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    pytest.fail(f"repute serve was not ready within {READY_WITHIN_SECONDS} s:\n{log.read_text()}")


def test_the_installed_wheel_migrates_and_serves_from_anywhere(venv: Path, tmp_path: Path) -> None:
    workdir, data_dir = tmp_path / "elsewhere", tmp_path / "data"
    workdir.mkdir()
    where = subprocess.run([venv / "bin" / "python", "-c", "import service; print(service.__file__)"],
                           cwd=workdir, env=_env(data_dir), capture_output=True, text=True, check=True)  # fmt: skip
    assert Path(where.stdout.strip()).is_relative_to(venv)
    migrated = _run(venv, workdir, data_dir, "migrate")
    assert migrated.returncode == 0 and "applied: 0001_runs" in migrated.stdout, migrated.stderr

    session = (FIXTURES / "session_multi.json").read_bytes()
    run = orjson.loads(session)
    as_of = max(datetime.fromisoformat(event["timestamp"]) for event in run["events"]).date()
    with _serving(venv, workdir, data_dir) as url:
        key = (data_dir / "admin.key").read_text().strip()
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as client:
            posted = client.post("/v1/sessions", content=session, headers={"content-type": "application/json"})
            assert posted.status_code == 201, posted.text
            reputation = client.get(f"/v1/identities/{run['identity']}/reputation", params={"as_of": str(as_of)})
            assert reputation.status_code == 200 and reputation.json()["events"] > 0, reputation.text
            assert client.get("/ui/").is_success
            assert client.get("/v1/alerts").is_success


def test_the_installed_wheel_without_its_migrations_refuses_to_run(venv: Path, tmp_path: Path) -> None:
    locate = "from service.store.migrate import MIGRATIONS; print(MIGRATIONS)"
    where = subprocess.run([venv / "bin" / "python", "-c", locate], cwd=tmp_path, capture_output=True, text=True,
                           check=True)  # fmt: skip
    migrations = Path(where.stdout.strip())
    hidden = migrations.with_name("migrations.hidden")
    migrations.rename(hidden)
    try:
        migrated = _run(venv, tmp_path, tmp_path / "data", "migrate")
        assert migrated.returncode != 0
        [line] = migrated.stderr.splitlines()
        assert line.startswith("error: no migration files")
        served = _run(venv, tmp_path, tmp_path / "data", "serve", "--host", "127.0.0.1", "--port", str(_free_port()))
        assert served.returncode != 0 and "no migration files" in served.stderr
    finally:
        hidden.rename(migrations)
