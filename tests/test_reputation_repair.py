"""The daily reputation sums made whole after a crash of the embedded engine: a kill between an insert's part
of reputation_events and its view's part leaves events stored that no daily sum counts, and a retry skips
their stored ids (tests/test_kill_mid_traffic.py met it). The store knows a crash from a clean close, and
repairs the sums at its next start."""

import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from service.reputation.model import ReputationEvent
from service.store import reputation as reputation_store
from service.store.client import Store
from service.store.migrate import migrate

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


@pytest.fixture
def migrated(fresh_database: Store) -> Iterator[Store]:
    migrate(fresh_database)
    yield fresh_database


def _payments(identity: str, deltas: tuple[float, ...]) -> list[ReputationEvent]:
    return [ReputationEvent(uuid.uuid4(), NOW, identity, "economic", "payment_completed", d) for d in deltas]


def _failure(identity: str) -> ReputationEvent:
    return ReputationEvent(uuid.uuid4(), NOW, identity, "task_quality", "failure.tool_loop", -0.5)


def _events_read(store: Store, tenant: str, identity: str) -> tuple[int, float, dict[str, int]]:
    reputation = reputation_store.identity_reputation(store, tenant, identity, NOW.date())
    assert reputation is not None
    return reputation["events"], reputation["economic"], reputation["failures"]


def test_events_the_daily_sums_missed_are_counted_after_the_repair(migrated: Store, tenant: str) -> None:
    """The torn insert made on purpose: the view detached while one block is written.

    Broken on purpose: sql/repair_daily_types.sql adding nothing (its WHERE made false) → this test fails."""
    reputation_store.insert_signals(migrated, tenant, "key-a", _payments("agent-torn", (1.0, 1.0)), NOW)
    migrated.client.command("DETACH TABLE reputation_daily_types_mv")
    try:
        torn = [*_payments("agent-torn", (-1.0,)), _failure("agent-torn")]
        reputation_store.insert_signals(migrated, tenant, "key-a", torn, NOW)
    finally:
        migrated.client.command("ATTACH TABLE reputation_daily_types_mv")
    assert _events_read(migrated, tenant, "agent-torn") == (2, 100.0, {})  # stored, not summed

    reputation_store.repair_daily_sums(migrated)
    after = _events_read(migrated, tenant, "agent-torn")
    assert after[0] == 4 and after[1] == pytest.approx(50 * (1 + 1 / 3), abs=1e-9) and after[2] == {"tool_loop": 1}
    reputation_store.repair_daily_sums(migrated)  # a second repair finds every sum right
    assert _events_read(migrated, tenant, "agent-torn") == after


OPEN_AND = """
import os, signal, sys
from pathlib import Path
from service.settings import Settings
from service.store.client import Store
store = Store(Settings(data_dir=Path(sys.argv[1])))
print(store.after_crash, flush=True)
if sys.argv[2] == "kill":
    os.kill(os.getpid(), signal.SIGKILL)
store.close()
"""


def _open_and(data_dir: Path, end: str) -> subprocess.CompletedProcess:
    """Opens the embedded store in a process of its own (one per path), says whether the last engine on
    it crashed, then closes the store or is killed."""
    return subprocess.run([sys.executable, "-c", OPEN_AND, str(data_dir), end], capture_output=True, text=True)


def test_a_store_knows_a_killed_engine_from_a_closed_one(tmp_path: Path) -> None:
    """Broken on purpose: `_left_by_a_crash` (service/store/client.py) always false → no repair runs after
    a kill, and this test fails."""
    assert _open_and(tmp_path, "close").stdout == "False\n"  # a new store
    assert _open_and(tmp_path, "close").stdout == "False\n"  # closed cleanly
    killed = _open_and(tmp_path, "kill")
    assert killed.returncode == -signal.SIGKILL and killed.stdout == "False\n"
    assert _open_and(tmp_path, "close").stdout == "True\n"
    assert _open_and(tmp_path, "close").stdout == "False\n"
