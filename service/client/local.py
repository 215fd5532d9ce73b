"""The API app in this process, on the store opened here, as the operator: whoever can open the data
directory owns the store anyway. No background workers run (no sweeper, no notifier)."""

import asyncio

import httpx
from fastapi import FastAPI

from service.api.app import create_app
from service.client.api import TIMEOUT_SECONDS, ApiClient
from service.services.keys import operator_principal
from service.services.setup import prepare_store
from service.settings import Settings
from service.store.client import Store


class InProcessTransport(httpx.BaseTransport):
    """A synchronous transport into an ASGI app: each request runs the app on its own event loop."""

    def __init__(self, app: FastAPI) -> None:
        self._asgi = httpx.ASGITransport(app=app)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        request.read()
        return asyncio.run(self._send(request))

    async def _send(self, request: httpx.Request) -> httpx.Response:
        response = await self._asgi.handle_async_request(request)
        content = await response.aread()
        return httpx.Response(response.status_code, headers=response.headers, content=content)


def in_process_client(settings: Settings) -> ApiClient:
    store = Store(settings)
    try:
        prepare_store(store)
    except BaseException:
        store.close()
        raise
    app = create_app(settings, store=store, acting_as=operator_principal())
    http = httpx.Client(transport=InProcessTransport(app), base_url="http://repute.local", timeout=TIMEOUT_SECONDS)
    return ApiClient(http, on_close=store.close, data_dir=settings.data_dir)
