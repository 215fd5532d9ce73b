"""API benchmarks (SPEC §13): finalize throughput through real HTTP (batched sessions of 50-event runs)
and single-run finalize latency, against `repute serve` on the embedded store in a subprocess.

The machine is shared, so next to the wall-clock figures come the server's own CPU seconds per run (all
its threads: Python and the engine): what a run costs, whatever else the machine is doing."""

import random
import statistics
import time

import httpx
import orjson

from bench._server import Served, cpu_seconds, disk_row, load_average, percentile, served
from service.testing.factory import make_session

BATCH = 500
BATCHES = 8
SINGLES = 300


def _batched(client: httpx.Client, server: Served, rng: random.Random) -> tuple[float, float]:
    """(runs/s, server CPU ms per run)."""
    bodies = [
        orjson.dumps([make_session(rng, f"b{b}-{i}", f"agent-{i % 40}", 50) for i in range(BATCH)])
        for b in range(BATCHES)
    ]
    started, cpu = time.perf_counter(), cpu_seconds(server.pid)
    for body in bodies:
        client.post("/v1/sessions/batch", content=body).raise_for_status()
    runs = BATCH * BATCHES
    return runs / (time.perf_counter() - started), (cpu_seconds(server.pid) - cpu) * 1000 / runs


def _singles(client: httpx.Client, server: Served, rng: random.Random) -> tuple[list[float], float]:
    """(latencies in ms, server CPU ms per run)."""
    latencies = []
    cpu = cpu_seconds(server.pid)
    for i in range(SINGLES):
        body = orjson.dumps(make_session(rng, f"single-{i}", f"agent-{i % 40}", 50))
        began = time.perf_counter()
        client.post("/v1/sessions", content=body).raise_for_status()
        latencies.append((time.perf_counter() - began) * 1000)
    return latencies, (cpu_seconds(server.pid) - cpu) * 1000 / SINGLES


def main() -> list[tuple[str, str, str]]:
    rng = random.Random(9)
    with served() as server, httpx.Client(base_url=server.base_url, headers=server.headers, timeout=300) as client:
        batched, batch_cpu = _batched(client, server, rng)
        latencies, single_cpu = _singles(client, server, rng)
    return [
        disk_row(server.file_ms),
        (f"finalize through HTTP, batches of {BATCH} 50-event runs", f"{batched:,.0f} runs/s", ">= 1,000 runs/s"),
        ("  server CPU per run, batched", f"{batch_cpu:.2f} ms", "-"),
        ("single-run finalize p50", f"{statistics.median(latencies):.1f} ms", "-"),
        ("single-run finalize p99", f"{percentile(latencies, 0.99):.1f} ms", "< 50 ms"),
        ("  server CPU per run, single", f"{single_cpu:.1f} ms", "-"),
        (load_average(), "after the API benchmarks", "-"),
    ]
