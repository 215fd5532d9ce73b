"""A daemon thread that calls `due(key, now)` once a key's deadline has passed, within about
`resolution` seconds; `due` answers the key's next deadline, or None when it is done. Each key holds its
latest deadline (setting a key again moves it). A failing call is logged and the key dropped: the
periodic sweeps that catch up after a restart catch up after that too."""

import heapq
import itertools
import logging
import threading
from collections.abc import Callable, Hashable
from datetime import UTC, datetime
from typing import Generic, TypeVar

log = logging.getLogger("repute.deadlines")
Key = TypeVar("Key", bound=Hashable)


class Deadlines(Generic[Key]):
    def __init__(self, name: str, due: Callable[[Key, datetime], datetime | None], resolution: float = 0.25) -> None:
        self._due = due
        self._resolution = resolution
        self._heap: list[tuple[datetime, int, Key]] = []
        self._deadline: dict[Key, datetime] = {}
        self._order = itertools.count()  # keys need not be comparable
        self._changed = threading.Condition()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> "Deadlines[Key]":
        self._thread.start()
        return self

    def at(self, key: Key, when: datetime) -> None:
        with self._changed:
            self._deadline[key] = when
            heapq.heappush(self._heap, (when, next(self._order), key))
            self._changed.notify()

    def pending(self) -> int:
        with self._changed:
            return len(self._deadline)

    def stop(self, timeout: float = 10.0) -> None:
        with self._changed:
            self._stopping = True
            self._changed.notify()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            with self._changed:
                if self._stopping:
                    return
                ready = self._take_ready(datetime.now(UTC))
                if not ready:
                    self._changed.wait(self._resolution)
                    continue
            for key in ready:
                self._call(key)

    def _take_ready(self, now: datetime) -> list[Key]:
        """The keys whose latest deadline has passed (entries a later `at` replaced are dropped)."""
        ready = []
        while self._heap and self._heap[0][0] <= now:
            when, _, key = heapq.heappop(self._heap)
            if self._deadline.get(key) == when:
                del self._deadline[key]
                ready.append(key)
        return ready

    def _call(self, key: Key) -> None:
        try:
            later = self._due(key, datetime.now(UTC))
        except Exception:  # the thread must outlive any one key
            log.exception("deadline of %s failed", key)
            return
        if later is not None:
            self.at(key, later)
