"""API benchmarks (SPEC §13): finalize throughput through real HTTP (batched sessions of 50-event runs)
and single-run finalize latency, against `repute serve` on the embedded store in a subprocess."""

import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import orjson

from bench.store import percentile
from service.testing.factory import make_session
from service.testing.live import free_port

BATCH = 500
BATCHES = 8
SINGLES = 300


def _start(data_dir: Path, port: int) -> subprocess.Popen:
    env = {**os.environ, "REPUTE_DATA_DIR": str(data_dir)}
    process = subprocess.Popen(
        [sys.executable, "-m", "service", "serve", "--port", str(port)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    for _ in range(600):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200:
                return process
        except httpx.HTTPError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("server did not start")


def main() -> list[tuple[str, str, str]]:
    rng = random.Random(9)
    with tempfile.TemporaryDirectory() as directory:
        data_dir, port = Path(directory), free_port()
        server = _start(data_dir, port)
        try:
            key = (data_dir / "admin.key").read_text().strip()
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers={"Authorization": f"Bearer {key}"},
                              timeout=300) as client:  # fmt: skip
                bodies = [
                    orjson.dumps([make_session(rng, f"b{b}-{i}", f"agent-{i % 40}", 50) for i in range(BATCH)])
                    for b in range(BATCHES)
                ]
                started = time.perf_counter()
                for body in bodies:
                    client.post("/v1/sessions/batch", content=body).raise_for_status()
                batched = BATCH * BATCHES / (time.perf_counter() - started)
                latencies = []
                for i in range(SINGLES):
                    body = orjson.dumps(make_session(rng, f"single-{i}", f"agent-{i % 40}", 50))
                    began = time.perf_counter()
                    client.post("/v1/sessions", content=body).raise_for_status()
                    latencies.append((time.perf_counter() - began) * 1000)
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=30)
    return [
        (f"finalize through HTTP, batches of {BATCH} 50-event runs", f"{batched:,.0f} runs/s", ">= 1,000 runs/s"),
        ("single-run finalize p50", f"{statistics.median(latencies):.1f} ms", "-"),
        ("single-run finalize p99", f"{percentile(latencies, 0.99):.1f} ms", "< 50 ms"),
    ]
