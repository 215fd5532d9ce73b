"""Locks by key, made on first use and dropped when nobody holds or waits for them: callers that share no
key never wait on each other, whatever they hold."""

import threading
from collections.abc import Iterable, Iterator
from contextlib import ExitStack, contextmanager

Key = tuple[str, ...]


class KeyedLocks:
    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[Key, tuple[threading.Lock, int]] = {}  # key -> (its lock, holders and waiters)

    @contextmanager
    def holding(self, keys: Iterable[Key]) -> Iterator[None]:
        """Holds the lock of every key, taken in sorted order so two callers never wait in a cycle."""
        with ExitStack() as stack:
            for key in sorted(set(keys)):
                stack.enter_context(self._held(key))
            yield

    @contextmanager
    def _held(self, key: Key) -> Iterator[None]:
        with self._guard:
            lock, users = self._locks.get(key) or (threading.Lock(), 0)
            self._locks[key] = (lock, users + 1)
        try:
            with lock:
                yield
        finally:
            with self._guard:
                lock, users = self._locks.pop(key)
                if users > 1:
                    self._locks[key] = (lock, users - 1)
