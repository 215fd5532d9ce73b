"""Where one agent's reputation read spends its milliseconds (issue #44): GET /v1/identities/{id}/reputation
answers `reputation_report`, which reads the identity's row of the fleet table when nothing it was computed
from was written since a margin before the last refresh (sql/identity_reputation_refreshed.sql), and else
the formula (the view reputation_at's query for one identity) and the runs' figures (identity_run_days) side
by side. The fresh row's path is measured with a margin of 0 after a refresh: the report of an identity whose
last write is older than the margin. On the quick tour's store (every file of examples/ ingested by `repute
ingest`, in a process of its own), in this process: the whole report, then each of its reads alone, the
engine's planning of the formula (EXPLAIN PLAN: parsed, analyzed and planned, not run), the
client library's work on the formula's text before it is sent, and one trivial statement (the engine's
floor per statement). What HTTP adds is the history benchmark's reputation figure minus the report's."""

import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bench._server import percentile
from bench.store import timed
from service.reputation import model
from service.services import reputation as reputation_service
from service.settings import Settings
from service.store import reputation as reputation_store
from service.store import writer
from service.store.client import Store
from service.store.definitions import EACH_DAY, formula_query

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
TENANT = "default"
IDENTITY = "agent-atlas"
WARM_UP = 10
REQUESTS = 200


def _quick_tour(data_dir: Path) -> None:
    """Every sample ingested through the CLI's in-process client, which releases the store when it exits."""
    environment = {**os.environ, "REPUTE_DATA_DIR": str(data_dir)}
    environment.pop("REPUTE_URL", None)
    command = [sys.executable, "-m", "service", "ingest", "--quiet", str(EXAMPLES)]
    subprocess.run(command, env=environment, check=True, capture_output=True)


def _timed(call: Callable[[], object]) -> list[float]:
    timed(call, WARM_UP)
    return timed(call, REQUESTS)


def _row(name: str, spent: list[float]) -> tuple[str, str, str]:
    return (name, f"p50 {statistics.median(spent):.1f} / p99 {percentile(spent, 0.99):.1f} ms", "-")


def main() -> list[tuple[str, str, str]]:
    today = datetime.now(UTC).date()
    first = today - timedelta(days=model.WINDOW_DAYS - 1)
    formula = formula_query("definitions/reputation_at", reputation_store.ONE_IDENTITY, EACH_DAY)
    parameters = {"tenant": TENANT, "identity": IDENTITY, "as_of_days": [today]}
    with tempfile.TemporaryDirectory() as directory:
        _quick_tour(Path(directory))
        store = Store(Settings(data_dir=Path(directory)))
        client = store.client
        writer.full_refresh_request(store, datetime.now(UTC))  # the fleet's rows stale: the formula's path
        steps: tuple[tuple[str, Callable[[], object]], ...] = (
            ("the report, its fleet row stale (the check, then the two reads below side by side)",
             lambda: reputation_service.reputation_report(store, TENANT, IDENTITY, today)),
            ("read: the formula for one identity", lambda: reputation_store.identity_reputation(
                store, TENANT, IDENTITY, today)),
            ("  of which the engine plans it (EXPLAIN PLAN)",
             lambda: client.query(f"EXPLAIN PLAN {formula}", parameters=parameters)),
            ("  of which the client library reads its text",
             lambda: client.create_query_context(query=formula, parameters=parameters)),
            ("read: the runs' figures (identity_run_days)",
             lambda: reputation_store.identity_activity(store, TENANT, IDENTITY, first, today)),
            ("one trivial statement (SELECT 1)", lambda: client.query("SELECT 1")),
        )  # fmt: skip
        rows = [_row(name, _timed(call)) for name, call in steps]
        reputation_store.refresh_scores(store)
        fresh = _timed(lambda: reputation_store.refreshed_reputation(store, TENANT, IDENTITY, today, margin_seconds=0))
        rows.append(_row("the report, its fleet row fresh (the row and its checks)", fresh))
        store.close()
    return [*rows, (f"formula text {len(formula):,} characters", "-", "-")]
