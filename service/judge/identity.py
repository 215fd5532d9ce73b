"""Which agent a session belongs to (SPEC §3.2)."""

from collections.abc import Sequence

from service.judge.otlp import LogRecord
from service.otlp.attributes import Attributes

DEFAULT_IDENTITY_ATTRIBUTES: tuple[str, ...] = ("gen_ai.agent.id", "agent.id", "masque", "service.name")


class IdentityRule:
    """The attribute names that name a session's agent, best first. Each name is looked up in the
    record's attributes, then in its resource's; numbers are accepted as text, empty values are not."""

    __slots__ = ("names", "ranked_above")

    def __init__(self, names: Sequence[str] = DEFAULT_IDENTITY_ATTRIBUTES) -> None:
        self.names = tuple(names)
        # ranked_above[k]: the names better than rank k, for a cheap test before a search.
        self.ranked_above = [frozenset(self.names[:rank]) for rank in range(len(self.names) + 1)]

    def may_improve(self, record: LogRecord, rank: int) -> bool:
        """Whether the record carries a name ranked better than `rank` (runs for every record)."""
        above = self.ranked_above[rank]
        return not (above.isdisjoint(record.attributes) and above.isdisjoint(record.resource_attributes))

    def find(self, record: LogRecord, limit: int) -> tuple[int, str] | None:
        """(rank, value) of the first of `names[:limit]` on the record; `limit` lets a caller look
        only for names ranked better than one it already found."""
        attributes, resource_attributes = record.attributes, record.resource_attributes
        for rank in range(limit):
            value = _text(attributes, self.names[rank]) or _text(resource_attributes, self.names[rank])
            if value:
                return rank, value
        return None


DEFAULT_IDENTITY_RULE = IdentityRule()


def _text(attributes: Attributes, name: str) -> str | None:
    value = attributes.get(name)
    if type(value) is str:
        return value
    return str(value) if type(value) is int else None
