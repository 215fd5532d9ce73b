"""The agent page's reads of one agent on the quick tour's store (README "Quick tour": session_multi.json
posted, then `repute ingest examples/`): its daily history (GET /v1/identities/{id}/history?days=90, the
chart; issue #41: 4.1-6.9 s on a loaded 2-core host before) and its reputation with its runs' figures (GET
/v1/identities/{id}/reputation, issue #44), through real HTTP against `repute serve` in a subprocess. Next
to the wall-clock figures, the server's own CPU milliseconds per request."""

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

from bench._server import cpu_seconds, load_average, percentile, served

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
IDENTITY = "agent-atlas"
DAYS = 90
WARM_UP = 10
REQUESTS = 200


def _quick_tour(base_url: str, key: str) -> None:
    """The README's quick tour's writes: one sample posted, then every sample ingested."""
    headers = {"Authorization": f"Bearer {key}"}
    body = (EXAMPLES / "session_multi.json").read_bytes()
    httpx.post(f"{base_url}/v1/sessions", content=body, headers=headers, timeout=60).raise_for_status()
    environment = {**os.environ, "REPUTE_URL": base_url, "REPUTE_API_KEY": key}
    command = [sys.executable, "-m", "service", "ingest", "--quiet", str(EXAMPLES)]
    subprocess.run(command, env=environment, check=True, capture_output=True)


# The agent page's two reads of one agent: its daily series and its reputation with its runs' figures.
READS: tuple[tuple[str, str, dict[str, int], str], ...] = (
    ("history", f"/v1/identities/{IDENTITY}/history", {"days": DAYS}, "< 50 ms"),
    ("reputation", f"/v1/identities/{IDENTITY}/reputation", {}, "< 20 ms"),
)


def _timed(client: httpx.Client, pid: int, path: str, params: dict[str, int]) -> tuple[list[float], float]:
    """Each request's milliseconds, and the server's CPU milliseconds per request."""
    for _ in range(WARM_UP):
        client.get(path, params=params).raise_for_status()
    latencies = []
    cpu = cpu_seconds(pid)
    for _ in range(REQUESTS):
        began = time.perf_counter()
        client.get(path, params=params).raise_for_status()
        latencies.append((time.perf_counter() - began) * 1000)
    return latencies, (cpu_seconds(pid) - cpu) * 1000 / REQUESTS


def main() -> list[tuple[str, str, str]]:
    rows = []
    with served() as server, httpx.Client(base_url=server.base_url, headers=server.headers, timeout=60) as client:
        _quick_tour(server.base_url, server.key)
        for name, path, params, target in READS:
            latencies, server_cpu = _timed(client, server.pid, path, params)
            rows += [
                (f"{name} of {IDENTITY}, p50", f"{statistics.median(latencies):.1f} ms", "-"),
                (f"{name} of {IDENTITY}, p99", f"{percentile(latencies, 0.99):.1f} ms", target),
                ("  server CPU per request", f"{server_cpu:.1f} ms", "-"),
            ]
    return [*rows, (load_average(), "after the history benchmark", "-")]
