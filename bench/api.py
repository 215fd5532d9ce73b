"""API benchmarks (SPEC §13): finalize throughput through real HTTP (batched sessions of 50-event runs)
and single-run finalize latency, against `repute serve` on the embedded store in a subprocess.

The machine is shared, so next to the wall-clock figures come the server's own CPU seconds per run (all
its threads: Python and the engine): what a run costs, whatever else the machine is doing.

`side_by_side` (bench compare --side-by-side) serves two commits at once and sends each batch and each
single run to one and then the other (the order alternating), so that what the host does meanwhile falls
on both alike: two servers measured one after the other differ by the host's drift as much as by their
code (bench/README.md)."""

import random
import statistics
import time
from collections.abc import Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import orjson

from bench._server import Served, cpu_seconds, disk_row, load_average, percentile, served
from service.testing.factory import make_session

BATCH = 500
BATCHES = 8
SINGLES = 300
WARM_SINGLES = 20  # single runs each new server answers, side by side, before it is measured
Row = tuple[str, str, str]


@dataclass
class Figures:
    """One server's measurements: each batch's and each single run's wall ms and server CPU ms."""

    batches: list[float] = field(default_factory=list)
    batch_cpu: list[float] = field(default_factory=list)
    singles: list[float] = field(default_factory=list)
    single_cpu: list[float] = field(default_factory=list)


@dataclass(frozen=True)
class Bodies:
    batches: list[bytes]
    singles: list[bytes]


def bodies(batches: int = BATCHES, singles: int = SINGLES) -> Bodies:
    rng = random.Random(9)
    return Bodies(
        [
            orjson.dumps([make_session(rng, f"b{b}-{i}", f"agent-{i % 40}", 50) for i in range(BATCH)])
            for b in range(batches)
        ],
        [orjson.dumps(make_session(rng, f"single-{i}", f"agent-{i % 40}", 50)) for i in range(singles)],
    )


def _post(client: httpx.Client, server: Served, path: str, body: bytes, walls: list[float], cpus: list[float]) -> None:
    """One request, its wall ms added to `walls` and the server's CPU ms to `cpus`."""
    cpu, began = cpu_seconds(server.pid), time.perf_counter()
    client.post(path, content=body).raise_for_status()
    walls.append((time.perf_counter() - began) * 1000)
    cpus.append((cpu_seconds(server.pid) - cpu) * 1000)


def _batch(client: httpx.Client, server: Served, body: bytes, figures: Figures) -> None:
    _post(client, server, "/v1/sessions/batch", body, figures.batches, figures.batch_cpu)


def _single(client: httpx.Client, server: Served, body: bytes, figures: Figures) -> None:
    _post(client, server, "/v1/sessions", body, figures.singles, figures.single_cpu)


def rows(figures: Figures) -> list[Row]:
    runs = BATCH * len(figures.batches)
    return [
        (
            f"finalize through HTTP, batches of {BATCH} 50-event runs",
            f"{runs * 1000 / sum(figures.batches):,.0f} runs/s",
            ">= 1,000 runs/s",
        ),
        ("  server CPU per run, batched", f"{sum(figures.batch_cpu) / runs:.2f} ms", "-"),
        ("single-run finalize p50", f"{statistics.median(figures.singles):.1f} ms", "-"),
        ("single-run finalize p99", f"{percentile(figures.singles, 0.99):.1f} ms", "< 50 ms"),
        ("  server CPU per run, single", f"{statistics.mean(figures.single_cpu):.1f} ms", "-"),
    ]


def main() -> list[Row]:
    posted, figures = bodies(), Figures()
    with served() as server, httpx.Client(base_url=server.base_url, headers=server.headers, timeout=300) as client:
        for body in posted.batches:
            _batch(client, server, body, figures)
        for body in posted.singles:
            _single(client, server, body, figures)
    return [disk_row(server.file_ms), *rows(figures), (load_average(), "after the API benchmarks", "-")]


def side_by_side(places: Mapping[str, Path], batches: int = 2 * BATCHES, singles: int = SINGLES) -> dict[str, Figures]:
    """Each label's server (its service from its place, bench/compare.py) measured request by request beside
    the others: every batch, then every single run, goes to each server in turn, the first one alternating.
    One batch and WARM_SINGLES single runs first, on each, are not counted (a new server's first requests)."""
    posted = bodies(batches + 1, singles + WARM_SINGLES)
    figures = {label: Figures() for label in places}
    with ExitStack() as stack:
        clients = {}
        for label, place in places.items():
            server = stack.enter_context(served(place))
            client = stack.enter_context(httpx.Client(base_url=server.base_url, headers=server.headers, timeout=300))
            clients[label] = (client, server)
            _batch(client, server, posted.batches[0], Figures())
            for body in posted.singles[:WARM_SINGLES]:
                _single(client, server, body, Figures())
        for number, body in enumerate(posted.batches[1:]):
            for label in turn_order(list(clients), number):
                _batch(*clients[label], body, figures[label])
        for number, body in enumerate(posted.singles[WARM_SINGLES:]):
            for label in turn_order(list(clients), number):
                _single(*clients[label], body, figures[label])
    return figures


def turn_order(labels: list[str], number: int) -> list[str]:
    """The labels in the order of request `number`: each one first in its turn."""
    shift = number % len(labels)
    return labels[shift:] + labels[:shift]
