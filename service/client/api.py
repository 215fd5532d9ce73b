"""One client over the REST API: a running server over HTTP, or the app in this process."""

from collections.abc import Callable
from typing import Any

import httpx

from service.client.server_file import operator_key, running_server
from service.settings import Settings

TIMEOUT_SECONDS = 120


class ApiError(RuntimeError):
    """The API refused a request; the message is the problem's detail, one line."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class ApiClient:
    def __init__(self, http: httpx.Client, on_close: Callable[[], None] | None = None) -> None:
        self.http = http
        self._on_close = on_close

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response | None:
        """The response; None for a 404 (no such thing for this tenant); ApiError for any other error."""
        response = self.http.request(method, path, **kwargs)
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


def open_client(settings: Settings) -> ApiClient:
    """The running server that owns this embedded store, else the app in process on the configured store."""
    if settings.embedded:
        url = running_server(settings.data_dir)
        if url:
            key = operator_key(settings.data_dir)
            if key is None:
                raise ApiError(f"a server runs at {url} but no key: set REPUTE_API_KEY")
            http = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=TIMEOUT_SECONDS)
            return ApiClient(http)
    from service.client.local import in_process_client

    return in_process_client(settings)
