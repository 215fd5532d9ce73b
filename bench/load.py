"""Load benchmark: 16 clients for 60 s (`REPUTE_BENCH_LOAD_SECONDS`) against `repute serve` on a fresh
embedded store, mixing single finalizes, batches, run lists and reputation reads. Reports requests/s and
p50/p99/max per route: reads should stay fast while writes queue (issue #14: reads p99 < 100 ms, no
request over 1 s). Two tenants, one flooding, are bench/fairness.py's.

The clients share one event loop on the same 2 cores as the server, so what they do between requests
shows in every latency they measure. They build no run while the clock runs: the bodies are made before
it, with a slot for the run id that each request fills in. Next to the clients' figures come the server's
own (its access log: from the request's arrival in the application to the end of its answer)."""

import asyncio
import os
import random
import statistics
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import orjson

from bench._server import Served, cpu_seconds, disk_row, load_average, percentile, served
from service.testing.factory import make_session

CLIENTS = 16
SECONDS = float(os.environ.get("REPUTE_BENCH_LOAD_SECONDS", 60))
BATCH = 100
IDENTITIES = 40
AS_OF = "2026-11-02"
# Route -> share of the requests: half reads, half writes (most of them single runs).
MIX = {
    "POST /v1/sessions": 45,
    "POST /v1/sessions/batch": 5,
    "GET /v1/runs": 25,
    "GET /v1/identities/{id}/reputation": 25,
}
READS = ("GET /v1/runs", "GET /v1/identities/{id}/reputation")


RUN_ID_SLOT = b"@run@"  # in the bodies made before the clock, where each request's own run id goes
BODIES = 32  # of each kind: single runs and batches, each run with an identity drawn at random
REQUEST_ID = "load-"  # the measured requests' X-Request-ID begins so; the seed batch's does not


@dataclass(frozen=True)
class Bodies:
    singles: list[bytes]
    batches: list[bytes]


def _bodies(rng: random.Random) -> Bodies:
    def run(suffix: str) -> dict:
        return make_session(rng, f"load-{RUN_ID_SLOT.decode()}{suffix}", f"agent-{rng.randrange(IDENTITIES)}", 50)

    return Bodies(
        singles=[orjson.dumps(run("")) for _ in range(BODIES)],
        batches=[orjson.dumps([run(f"-{i}") for i in range(BATCH)]) for _ in range(BODIES)],
    )


@dataclass
class Client:
    number: int
    rng: random.Random
    bodies: Bodies
    sent: int = 0
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    failures: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def identity(self) -> str:
        return f"agent-{self.rng.randrange(IDENTITIES)}"

    def body(self, kind: list[bytes]) -> bytes:
        return self.rng.choice(kind).replace(RUN_ID_SLOT, f"{self.number}-{self.sent}".encode())

    def request(self, route: str) -> tuple[str, str, bytes | None]:
        self.sent += 1
        if route == "POST /v1/sessions":
            return "POST", "/v1/sessions", self.body(self.bodies.singles)
        if route == "POST /v1/sessions/batch":
            return "POST", "/v1/sessions/batch", self.body(self.bodies.batches)
        if route == "GET /v1/runs":
            return "GET", f"/v1/runs?limit=50&identity={self.identity()}", None
        return "GET", f"/v1/identities/{self.identity()}/reputation?as_of={AS_OF}", None


async def _drive(client: Client, http: httpx.AsyncClient, deadline: float) -> None:
    routes, weights = list(MIX), list(MIX.values())
    while time.perf_counter() < deadline:
        route = client.rng.choices(routes, weights)[0]
        method, url, body = client.request(route)
        headers = {"X-Request-ID": f"{REQUEST_ID}{client.number}-{client.sent}"}
        began = time.perf_counter()
        response = await http.request(method, url, content=body, headers=headers)
        client.latencies[route].append((time.perf_counter() - began) * 1000)
        if response.status_code >= 400:
            client.failures[route] += 1


async def _run(server: Served) -> tuple[list[Client], float]:
    limits = httpx.Limits(max_connections=CLIENTS)
    async with httpx.AsyncClient(base_url=server.base_url, headers=server.headers, timeout=120, limits=limits) as http:
        seed = [make_session(random.Random(1), f"seed-{i}", f"agent-{i % IDENTITIES}", 50) for i in range(200)]
        (await http.post("/v1/sessions/batch", content=orjson.dumps(seed))).raise_for_status()
        bodies = _bodies(random.Random(2))
        clients = [Client(number, random.Random(number), bodies) for number in range(CLIENTS)]
        started = time.perf_counter()
        await asyncio.gather(*(_drive(client, http, started + SECONDS) for client in clients))
        return clients, time.perf_counter() - started


def _spread(samples: list[float]) -> str:
    return f"p50 {statistics.median(samples):.0f} / p99 {percentile(samples, 0.99):.0f} / max {max(samples):.0f} ms"


def _route_of(method: str, path: str) -> str:
    return "GET /v1/identities/{id}/reputation" if path.endswith("/reputation") else f"{method} {path}"


def _server_side(access_log: Path) -> dict[str, list[float]]:
    """The measured requests' durations as the server logged them, by route."""
    durations: dict[str, list[float]] = defaultdict(list)
    for line in access_log.read_bytes().splitlines():
        if not line.startswith(b"{"):
            continue
        entry = orjson.loads(line)
        if entry["request_id"].startswith(REQUEST_ID):
            durations[_route_of(entry["method"], entry["path"])].append(entry["duration_ms"])
    return durations


def _route_rows(clients: list[Client], seconds: float, server: dict[str, list[float]]) -> list[tuple[str, str, str]]:
    rows = []
    for route in MIX:
        samples = [ms for client in clients for ms in client.latencies[route]]
        failed = sum(client.failures[route] for client in clients)
        if not samples:
            continue
        target = "p99 < 100 ms" if route in READS else "max < 1,000 ms"
        rows.append((f"{route}: {len(samples)} requests, {len(samples) / seconds:.1f}/s, {failed} failed",
                     _spread(samples), target))  # fmt: skip
        if server.get(route):
            rows.append(("  the same, as the server timed it", _spread(server[route]), "-"))
    return rows


def main() -> list[tuple[str, str, str]]:
    with served() as server:
        cpu = cpu_seconds(server.pid)
        clients, seconds = asyncio.run(_run(server))
        busy = (cpu_seconds(server.pid) - cpu) / seconds
        server_side = _server_side(server.access_log)
    total = sum(len(samples) for client in clients for samples in client.latencies.values())
    return [
        (f"{CLIENTS} clients for {seconds:.0f} s, mixed reads and writes", f"{total / seconds:.1f} requests/s", "-"),
        *_route_rows(clients, seconds, server_side),
        ("  server CPU busy (cores)", f"{busy:.2f}", "-"),
        disk_row(server.file_ms),
        (load_average(), "after the load benchmark", "-"),
    ]


if __name__ == "__main__":
    for row in main():
        print(" | ".join(row))
