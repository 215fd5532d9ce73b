"""One client over the REST API: a running server over HTTP, or the app in this process (which one:
service/client/connect.py)."""

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

TIMEOUT_SECONDS = 120


class ApiError(RuntimeError):
    """The API refused a request; the message is the problem's detail, one line."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class NoStore(Exception):
    """A command that needs a store would open one that does not exist yet: it has nothing to read, and a
    read creates nothing."""


class ApiClient:
    """`url` is the server's (None: the app in this process); `data_dir` the data directory of the
    embedded store it serves, when known."""

    def __init__(
        self,
        http: httpx.Client,
        on_close: Callable[[], None] | None = None,
        url: str | None = None,
        data_dir: Path | None = None,
    ) -> None:
        self.http = http
        self._on_close = on_close
        self.url = url
        self.data_dir = data_dir

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response | None:
        """The response; None for a 404 (no such thing for this tenant); ApiError for any other error, a
        server that cannot be reached too."""
        try:
            response = self.http.request(method, path, **kwargs)
        except httpx.TransportError as exc:
            raise ApiError(f"cannot reach the server at {self.url}: {exc}") from exc
        if response.status_code == 404:
            return None
        if response.status_code >= 400:
            raise ApiError(f"{method} {path}: {response.status_code} {_detail(response)}", response.status_code)
        return response

    def json(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self.request(method, path, **kwargs)
        return None if response is None else response.json()

    def close(self) -> None:
        self.http.close()
        if self._on_close is not None:
            self._on_close()

    def __enter__(self) -> "ApiClient":
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def _detail(response: httpx.Response) -> str:
    if not response.content:
        return response.reason_phrase
    try:
        return str(response.json().get("detail", response.text))
    except ValueError:
        return response.text
