"""Trace-born runs at the caps (issue #37): the finalize of one trace of 1,000 / 10,000 / 100,000 spans of
three shapes (a chain of nested agents each its own child run; the same chain with deeper spans starting
earlier; a chain of one agent's model calls, deeper spans earlier), and how long tenant B's one-span trace
takes past its settle time while tenant A's largest trace finalizes in the same write pool (workers and
shares as the server makes them). Through the service's own functions on a fresh embedded store.

`REPUTE_BENCH_TRACE_SPANS=1000,10000 python -m bench traces` for a quicker run."""

import os
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from service.api import background
from service.api.metrics import Metrics
from service.api.writes import Writes
from service.services.finalize import finalize_run
from service.services.receivers import otlp_traces
from service.settings import Settings
from service.store import runs as run_store
from service.store.client import Store
from service.store.migrate import migrate
from service.traces import DecodedSpans, Span

SIZES = [int(size) for size in os.environ.get("REPUTE_BENCH_TRACE_SPANS", "1000,10000,100000").split(",")]
T0 = 1_700_000_000_000_000_000
MS = 1_000_000


def chain(length: int, trace: int, *, agents: bool, reverse: bool) -> list[Span]:
    """A chain of `length` nested spans; with `agents` each an agent of its own, else model calls of one."""
    trace_id = f"{trace:032x}"
    spans = []
    attributes: dict[str, object]
    for depth in range(length):
        start = T0 + (length - depth if reverse else depth) * MS
        if agents:
            attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": f"agent-{depth}"}
        else:
            attributes = {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 10}
        parent = None if depth == 0 else f"{depth:016x}"
        spans.append(
            Span(trace_id, f"{depth + 1:016x}", parent, "span", start, start + 1000 * MS, False, "",
                 attributes, {"service.name": "bench"}, ())
        )  # fmt: skip
    return spans


SHAPES: dict[str, Callable[[int, int], list[Span]]] = {
    "nested agents": lambda n, trace: chain(n, trace, agents=True, reverse=False),
    "nested agents, deeper earlier": lambda n, trace: chain(n, trace, agents=True, reverse=True),
    "one agent's calls, deeper earlier": lambda n, trace: chain(n, trace, agents=False, reverse=True),
}


def _finalize_seconds(store: Store, settings: Settings, tenant: str, spans: list[Span]) -> float:
    otlp_traces.receive(store, tenant, DecodedSpans(spans), datetime.now(UTC), settings)
    started = time.perf_counter()
    finalize_run(store, tenant, spans[0].trace_id, None, datetime.now(UTC), 0.8)
    return time.perf_counter() - started


def _settle_beside(store: Store, settings: Settings, spans: list[Span]) -> tuple[float, float]:
    """(seconds tenant B's one-span trace took past its settle time, seconds A's finalize took), while A's
    trace of `spans` finalizes in the same pool."""
    writes = Writes(workers=settings.write_concurrency + 1, per_tenant=settings.write_concurrency)
    timer = background.settle_timer(lambda: store, settings, Metrics(), writes).start()
    try:
        otlp_traces.receive(store, "tenant-a", DecodedSpans(spans), datetime.now(UTC), settings)
        started = time.perf_counter()
        big = writes.submit("tenant-a", lambda: finalize_run(store, "tenant-a", spans[0].trace_id, None,
                                                             datetime.now(UTC), 0.8))  # fmt: skip
        time.sleep(1)  # A's finalize under way
        small = chain(1, 999_999, agents=True, reverse=False)
        otlp_traces.receive(store, "tenant-b", DecodedSpans(small), datetime.now(UTC), settings)
        due = datetime.now(UTC)
        timer.at(("tenant-b", small[0].trace_id), due)
        settled = threading.Event()
        while not settled.wait(0.05):
            if run_store.run_states(store, "tenant-b", [small[0].trace_id]):
                settled.set()
        late = (datetime.now(UTC) - due).total_seconds()
        big.result()
        return late, time.perf_counter() - started
    finally:
        timer.stop()
        writes.stop()


def main() -> list[tuple[str, str, str]]:
    rows = []
    with tempfile.TemporaryDirectory() as directory:
        settings = Settings(data_dir=Path(directory), trace_settle_seconds=0)
        store = Store(settings)
        migrate(store)
        trace = 0
        for shape, make in SHAPES.items():
            for size in SIZES:
                trace += 1
                seconds = _finalize_seconds(store, settings, f"shape-{trace}", make(size, trace))
                rows.append((f"finalize, {size:,} spans: {shape}", f"{seconds:.2f} s", "near-linear"))
        late, took = _settle_beside(store, settings, SHAPES["nested agents"](max(SIZES), 10_000))
        rows.append((f"tenant B settles beside A's {max(SIZES):,}-span finalize ({took:.0f} s)",
                     f"{late:.2f} s late", "< 2 s"))  # fmt: skip
        store.close()
    return rows
