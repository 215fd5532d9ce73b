"""The server's background jobs, each run in its tenant's turn of the write pool (service.api.writes) and
never waited on: one tenant's slow finalize holds up no other tenant's sweep or settle (SPEC §13).

- The sweeper, every `session_sweep_seconds`: finalizes OTLP log sessions idle for `session_idle_minutes`
  and trace-born runs that settled (root span in, nothing for `trace_settle_seconds`) or went idle. Its
  state is the store (open runs and their last record or span), so a restart picks up where it left off.
  A run still queued or finalizing from an earlier pass is not queued again.
- The settle timer: finalizes a trace-born run `trace_settle_seconds` after its last span once its root
  has arrived (SPEC §3.4: within about a second, not at the sweeper's pace). The receiver sets each run's
  deadline; a check that finds spans still arriving sets the next one.
"""

import logging
from collections.abc import Callable
from concurrent.futures import Future
from datetime import datetime, timedelta
from functools import partial

from service.api.metrics import Metrics
from service.api.writes import Writes
from service.deadlines import Deadlines
from service.periodic import Periodic
from service.services import finalize
from service.services.receivers import otlp_logs, otlp_traces
from service.settings import Settings
from service.store.client import Store

log = logging.getLogger("repute.background")


def sweep(store: Callable[[], Store], settings: Settings, metrics: Metrics, writes: Writes, now: datetime) -> None:
    """One pass of the sweeper: every run due, queued in its tenant's turn; returns without waiting."""
    idle = timedelta(minutes=settings.session_idle_minutes)
    settle = timedelta(seconds=settings.trace_settle_seconds)
    for tenant, run_id in [*otlp_logs.idle(store(), now, idle), *otlp_traces.due(store(), now, settle, idle)]:
        job = partial(finalize.finalize_or_close, store(), tenant, run_id, now, settings.quality_pass_threshold)
        writes.submit_once(tenant, ("finalize", run_id), job, partial(_counted, metrics, (tenant, run_id)))


def _counted(metrics: Metrics, key: tuple[str, str], future: "Future[bool]") -> None:
    if (error := future.exception()) is not None:
        log.error("run %s of tenant %s could not be finalized; retried next pass", key[1], key[0], exc_info=error)
        metrics.sweep_failures.labels("retried").inc()
        return
    metrics.runs_finalized.inc()
    if not future.result():
        metrics.sweep_failures.labels("undiagnosable").inc()


def start_sweeper(store: Callable[[], Store], settings: Settings, metrics: Metrics, writes: Writes) -> Periodic:
    every = settings.session_sweep_seconds
    return Periodic("repute-session-sweeper", partial(sweep, store, settings, metrics, writes), lambda _: every).start()


def settle_timer(
    store: Callable[[], Store], settings: Settings, metrics: Metrics, writes: Writes
) -> Deadlines[tuple[str, str]]:
    """Started with the server (an in-process app has none running: its callers finalize)."""
    settle = timedelta(seconds=settings.trace_settle_seconds)

    def settled(key: tuple[str, str], future: "Future[otlp_traces.Settling]") -> None:
        if (error := future.exception()) is not None:
            log.error("settling run %s of tenant %s failed; the sweeper retries", key[1], key[0], exc_info=error)
            return
        settling = future.result()
        metrics.runs_finalized.inc(settling.finalized)
        if settling.look_again is not None:
            timer.at(key, settling.look_again)

    def due(key: tuple[str, str], now: datetime) -> None:
        tenant, run_id = key
        threshold = settings.quality_pass_threshold
        check = partial(otlp_traces.finalize_if_settled, store(), tenant, run_id, now, settle, threshold)
        writes.submit_once(tenant, ("settle", run_id), check, partial(settled, key))

    timer: Deadlines[tuple[str, str]] = Deadlines("repute-trace-settle", due)
    return timer
