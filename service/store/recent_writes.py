"""The identities this process wrote reputation events for lately, per tenant. A fleet row holds only when
its refresh started more than a margin after the identity's last write (sql/identity_last_write.sql), so an
identity written here less than that margin ago has a stale row for certain, and its read can go straight to
the formula without the check's statements (a client that writes, then reads, as a CI gate does). A hint
only: for every identity not listed, whatever process wrote it, the check decides."""

import threading
import time
from collections import OrderedDict
from collections.abc import Iterable

# Bounded: the oldest entries go first. An identity dropped early is only checked instead of skipped.
CAPACITY = 100_000


class RecentWrites:
    def __init__(self, capacity: int = CAPACITY) -> None:
        self._capacity = capacity
        self._lock = threading.Lock()
        self._written: OrderedDict[tuple[str, str], float] = OrderedDict()  # oldest write first

    def note(self, tenant: str, identities: Iterable[str]) -> None:
        """Called before the write starts: a read while it is under way skips the check too."""
        now = time.monotonic()
        with self._lock:
            for identity in identities:
                self._written[(tenant, identity)] = now
                self._written.move_to_end((tenant, identity))
            while len(self._written) > self._capacity:
                self._written.popitem(last=False)

    def within(self, tenant: str, identity: str, seconds: float) -> bool:
        """Whether this process wrote for the identity less than `seconds` ago."""
        with self._lock:
            written = self._written.get((tenant, identity))
        return written is not None and time.monotonic() - written < seconds
