"""`repute serve` on a fresh embedded store in a subprocess, for the benchmarks that go through real HTTP."""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from service.testing.live import free_port


@dataclass(frozen=True)
class Served:
    base_url: str
    key: str
    pid: int
    file_ms: float  # creating a file where its store lives, before it started (`file_creation_ms`)
    access_log: Path  # the server's stdout: one JSON line per request, with its duration_ms

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}


def _wait_ready(process: subprocess.Popen, port: int) -> None:
    for _ in range(600):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("server did not start")


@contextmanager
def served(place: Path | None = None) -> Iterator[Served]:
    """`repute serve` on a fresh store: this checkout's service, or the one importable from `place` (a
    directory holding another commit's `service`, as bench compare makes them)."""
    with tempfile.TemporaryDirectory() as directory:
        data_dir, port = Path(directory), free_port()
        file_ms = file_creation_ms(data_dir)
        access_log = data_dir / "access.log"
        from_place = {} if place is None else {"PYTHONPATH": str(place)}
        with access_log.open("wb") as stdout:
            process = subprocess.Popen(
                [sys.executable, "-m", "service", "serve", "--port", str(port)],
                env={**os.environ, "REPUTE_DATA_DIR": str(data_dir), **from_place}, cwd=place,
                stdout=stdout, stderr=subprocess.DEVNULL,
            )  # fmt: skip
        try:
            _wait_ready(process, port)
            key = (data_dir / "admin.key").read_text().strip()
            yield Served(f"http://127.0.0.1:{port}", key, process.pid, file_ms, access_log)
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (all its threads), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load_average() -> str:
    return "load average (1/5/15 min) " + " / ".join(f"{value:.1f}" for value in os.getloadavg())


def file_creation_ms(directory: Path, files: int = 200) -> float:
    """Mean wall time to create a small file in `directory`, where a store will live: every part the store
    writes creates about eleven. On this machine's ext4 (mounted without a journal) the kernel passes over
    the inodes freed in the last minutes when it allocates one, reading each, so the figure grows with what
    was deleted near `directory` lately: from about 0.03 ms on a quiet disk to over 1 ms right after other
    benchmarks' stores were removed (bench/README.md, "Where the time goes")."""
    probe = Path(tempfile.mkdtemp(dir=directory))
    started = time.perf_counter()
    for number in range(files):
        (probe / str(number)).write_bytes(b"x")
    elapsed = time.perf_counter() - started
    shutil.rmtree(probe)
    return elapsed * 1000 / files


def disk_row(file_ms: float) -> tuple[str, str, str]:
    return ("  disk: creating a file beside the store, before the benchmark", f"{file_ms:.2f} ms", "-")


def percentile(samples: list[float], q: float) -> float:
    """The q-quantile of the samples (nearest rank). Here, not in bench/store.py, so the benchmarks that
    speak HTTP only import nothing of the service's internals and run against any commit (bench compare)."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]
