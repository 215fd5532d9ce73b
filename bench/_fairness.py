"""Two tenants on one server (SPEC §13 fairness, issue #29): tenant B's single runs and reads, alone, then
while tenant A floods (conflicting single runs, batches of 100 runs, 40 bodies of about 1 MiB). Under the
flood both should stay within 3x of alone: writes queue per tenant and are served round robin, and a read
never waits for a thread a write holds."""

import asyncio
import os
import random
import statistics
import time
from collections.abc import Awaitable, Callable
from functools import partial

import httpx
import orjson

from bench._server import Served, load_average, served
from service.testing.factory import make_session

SECONDS = float(os.environ.get("REPUTE_BENCH_FAIRNESS_SECONDS", 20))
FLOODERS = 12
LARGE_BODIES = 40
BATCH = 100


def _flood_bodies(rng: random.Random) -> list[tuple[str, bytes]]:
    large = []
    for number in range(LARGE_BODIES):
        run = make_session(rng, f"large-{number}-@", "agent-a", 50)
        run["metadata"] = {"padding": "x" * 1_000_000}
        large.append(("/v1/sessions", orjson.dumps(run)))
    batches = [
        (
            "/v1/sessions/batch",
            orjson.dumps([make_session(rng, f"batch-{n}-{i}-@", "agent-a", 50) for i in range(BATCH)]),
        )
        for n in range(8)
    ]
    conflicting = [("/v1/sessions", orjson.dumps(make_session(rng, "conflicting", "agent-a", 5 + n))) for n in range(8)]
    return large + batches + conflicting


async def _flood(http: httpx.AsyncClient, bodies: list[tuple[str, bytes]], deadline: float, number: int) -> None:
    sent = 0
    while time.perf_counter() < deadline:
        path, body = bodies[(number + sent) % len(bodies)]
        sent += 1
        await http.post(path, content=body.replace(b"-@", f"-{number}-{sent}".encode()))


async def _measure(http: httpx.AsyncClient, deadline: float) -> tuple[list[float], list[float]]:
    """Tenant B: a single run, then a run list, one after the other until the deadline."""
    writes, reads, sent = [], [], 0
    rng = random.Random(5)
    while time.perf_counter() < deadline:
        sent += 1
        body = orjson.dumps(make_session(rng, f"b-{sent}-{time.perf_counter_ns()}", "agent-b", 50))
        writes.append(await _timed(partial(http.post, "/v1/sessions", content=body)))
        reads.append(await _timed(partial(http.get, "/v1/runs?limit=50&identity=agent-b")))
    return writes, reads


async def _timed(call: Callable[[], Awaitable[httpx.Response]]) -> float:
    began = time.perf_counter()
    (await call()).raise_for_status()
    return (time.perf_counter() - began) * 1000


async def _run(server: Served) -> dict[str, tuple[list[float], list[float]]]:
    async with httpx.AsyncClient(base_url=server.base_url, headers=server.headers, timeout=300) as admin:
        keys = {}
        for tenant in ("bench-a", "bench-b"):
            created = await admin.post("/v1/keys", json={"tenant": tenant, "scopes": ["ingest", "read"]})
            keys[tenant] = created.json()["key"]
    limits = httpx.Limits(max_connections=FLOODERS + 2)
    headers_a, headers_b = ({"Authorization": f"Bearer {keys[t]}"} for t in ("bench-a", "bench-b"))
    async with (
        httpx.AsyncClient(base_url=server.base_url, headers=headers_a, timeout=300, limits=limits) as flooder,
        httpx.AsyncClient(base_url=server.base_url, headers=headers_b, timeout=300) as other,
    ):
        alone = await _measure(other, time.perf_counter() + SECONDS / 2)
        bodies = _flood_bodies(random.Random(3))
        deadline = time.perf_counter() + SECONDS
        flooding = [asyncio.create_task(_flood(flooder, bodies, deadline, n)) for n in range(FLOODERS)]
        await asyncio.sleep(1)  # the flood's first requests are in
        under_flood = await _measure(other, deadline)
        await asyncio.gather(*flooding)
    return {"alone": alone, "flood": under_flood}


def rows() -> list[tuple[str, str, str]]:
    """The fairness rows of `python -m bench load`, on a server of their own."""
    with served() as server:
        measured = asyncio.run(_run(server))
    found = []
    for index, what in ((0, "tenant B single run"), (1, "tenant B run list")):
        alone, flood = (statistics.median(measured[when][index]) for when in ("alone", "flood"))
        found.append(
            (f"{what} p50, alone / while A floods", f"{alone:.0f} / {flood:.0f} ms ({flood / alone:.1f}x)", "<= 3x")
        )
    found.append((load_average(), "after the fairness benchmark", "-"))
    return found
