"""The server's connections send each response at once: Nagle's algorithm is off on them. With it on, the
body of a response (sent after its headers) waited for the client's delayed ACK, 40 ms on every request."""

import socket

import uvicorn

from service.server import listening_socket
from service.testing.live import free_port


def test_accepted_connections_have_tcp_nodelay() -> None:
    config = uvicorn.Config("service.server:worker_app", host="127.0.0.1", port=free_port())
    with listening_socket(config) as listening:
        listening.listen()
        with socket.create_connection(listening.getsockname()[:2]):
            accepted, _ = listening.accept()
            with accepted:
                assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
