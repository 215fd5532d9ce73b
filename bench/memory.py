"""What one large run costs the process in memory: one run of 100,000 events (the cap) posted whole through
the service function the write pool runs (`ingest_posted`), in a fresh process on a fresh embedded store;
the growth of the process's peak resident memory over that one run, beside the body's size. Each event's
payload (its canonical JSON) is held until the run is stored: what orjson allocates for each counts
(tests/test_payload_memory.py)."""

import random
import resource
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import orjson

from service.services.receivers import whole
from service.settings import Settings
from service.store.client import Store
from service.store.migrate import migrate
from service.testing.factory import make_session

EVENTS = 100_000


def _peak_kib() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux


def probe() -> None:
    """Prints the body's KiB and the peak's growth in KiB over ingesting it (run in a process of its own)."""
    with tempfile.TemporaryDirectory() as directory:
        settings = Settings(data_dir=Path(directory))
        store = Store(settings)
        migrate(store)
        small = orjson.dumps(make_session(random.Random(2), "warm", "agent-a", 50))
        whole.ingest_posted(store, "bench", [small], settings, datetime.now(UTC))  # first inserts, caches
        body = orjson.dumps(make_session(random.Random(1), "large", "agent-a", EVENTS))
        before = _peak_kib()
        whole.ingest_posted(store, "bench", [body], settings, datetime.now(UTC))
        print(len(body) // 1024, _peak_kib() - before)
        store.close()


def main() -> list[tuple[str, str, str]]:
    code = "from bench.memory import probe; probe()"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    body_kib, growth_kib = map(int, done.stdout.split()[-2:])
    metric = f"peak memory growth for one {EVENTS:,}-event run posted whole ({body_kib / 1024:.1f} MiB body)"
    return [(metric, f"{growth_kib / 1024:.0f} MiB (orjson {orjson.__version__})", "-")]
