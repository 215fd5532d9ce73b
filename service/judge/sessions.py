"""Records grouped into sessions by their `session.id` attribute."""

from collections.abc import Iterable
from dataclasses import dataclass

from service.judge.otlp import LogRecord


@dataclass(slots=True)
class SessionEntry:
    start: int | None  # the earliest record time; None when no record has a time
    records: int

    def include(self, start: int | None, records: int) -> None:
        self.records += records
        if start is not None and (self.start is None or start < self.start):
            self.start = start


class SessionIndex:
    """Each session's start and record count, in order of first appearance; and the records that
    belong to no session: `rejected` by the decoder, or `unsessioned` (no session.id). Memory grows
    with the number of sessions, not of records."""

    def __init__(self) -> None:
        self.sessions: dict[str, SessionEntry] = {}
        self.rejected = 0
        self.unsessioned = 0

    def add(self, session_times: Iterable[tuple[str | None, int | None]], rejected: int) -> None:
        self.rejected += rejected
        sessions = self.sessions
        for session_id, time in session_times:
            if session_id is None:
                self.unsessioned += 1
                continue
            entry = sessions.get(session_id)
            if entry is None:
                sessions[session_id] = SessionEntry(time, 1)
            else:
                entry.include(time, 1)

    def merge(self, later: "SessionIndex") -> None:
        """Fold in the index of the part of the log that follows this one's."""
        self.rejected += later.rejected
        self.unsessioned += later.unsessioned
        for session_id, theirs in later.sessions.items():
            self.sessions.setdefault(session_id, SessionEntry(None, 0)).include(theirs.start, theirs.records)

    def latest(self) -> str | None:
        """The session that started last (ties to the greater id; sessions without a time first)."""

        def started(session_id: str) -> tuple[bool, int, str]:
            start = self.sessions[session_id].start
            return start is not None, start or 0, session_id

        return max(self.sessions, key=started, default=None)


def group_by_session(records: Iterable[LogRecord]) -> dict[str, list[LogRecord]]:
    """The records of each session.id in input order; records without one are left out."""
    groups: dict[str, list[LogRecord]] = {}
    for record in records:
        if record.session_id is not None:
            groups.setdefault(record.session_id, []).append(record)
    return groups
