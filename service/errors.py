"""The one error hierarchy of the service. Pure: every layer may raise these, and the API maps each
class to one status (service/api/errors.py), the CLI to one line and an exit code.

- `ClientError`: the request cannot be served as sent (4xx); `field` names the offending place as a path
  (`events[3].timestamp`, `sessions[1].identity`, `query.cursor`), "" for the body as a whole.
- `StoreUnavailable`: ClickHouse cannot be reached or opened (503, nothing acknowledged).
"""

from collections.abc import Sequence
from typing import Any


def field_path(loc: Sequence[Any]) -> str:
    """('body', 'events', 3, 'timestamp') -> 'events[3].timestamp'; ('query', 'limit') -> 'query.limit'."""
    parts = list(loc)
    prefix = "" if parts and parts[0] == "body" else f"{parts.pop(0)}." if parts else ""
    if parts and parts[0] == "body":
        parts.pop(0)
    path = ""
    for part in parts:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return prefix + path if path else prefix.rstrip(".") or "body"


class ReputeError(Exception):
    """Base of every error the service raises on purpose."""


class ClientError(ReputeError, ValueError):
    """Input or a request that cannot be served as sent."""

    status = 422

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field

    def located(self) -> str:
        """'events[3].timestamp: <message>', or just the message when the whole body is at fault."""
        return f"{self.field}: {self}" if self.field else str(self)


class FieldError(ClientError):
    """A value that cannot be used (422); `field` names it."""


class NotFound(ClientError, LookupError):
    """No such thing for this tenant (404: another tenant's data is never revealed)."""

    status = 404

    def __init__(self, what: str) -> None:
        super().__init__("", f"no {what}")


class Conflict(ClientError):
    """The request contradicts what is stored (409), e.g. events for a finalized run."""

    status = 409

    def __init__(self, message: str, field: str = "") -> None:
        super().__init__(field, message)


class TooLarge(ClientError):
    """A request over one of the documented limits (413); the message names the limit and its setting."""

    status = 413

    def __init__(self, message: str, field: str = "") -> None:
        super().__init__(field, message)


class StoreUnavailable(ReputeError, RuntimeError):
    """ClickHouse cannot be reached or opened; callers answer 503 and acknowledge nothing."""


class StoreLocked(StoreUnavailable):
    """Another process owns the embedded store at this path."""


class MigrationError(ReputeError, RuntimeError):
    """The migrations cannot be applied as found (none shipped, or an applied file changed)."""
