"""A daemon thread that calls `tick(now)` and waits `delay(now)` seconds, again and again, until
stopped. Any one failing tick (the store down, a bad answer) is logged and the loop goes on."""

import logging
import threading
from collections.abc import Callable
from datetime import UTC, datetime

log = logging.getLogger("repute.periodic")


class Periodic:
    def __init__(self, name: str, tick: Callable[[datetime], None], delay: Callable[[datetime], float]) -> None:
        self.name = name
        self._tick = tick
        self._delay = delay
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> "Periodic":
        self._thread.start()
        return self

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._tick(datetime.now(UTC))
            except Exception:  # the loop must outlive any single failure
                log.exception("%s failed", self.name)
            self._stop.wait(self._delay(datetime.now(UTC)))

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self._thread.join(timeout)
