"""The server's listening socket: bound before anything else, so a port in use is one line naming it and
REPUTE_PORT, exit 2, before a store is opened or an admin key made; and its connections send each response
at once (Nagle's algorithm off: the body of a response, sent after its headers, waited for the client's
delayed ACK, 40 ms on every request)."""

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from service.server import listening_socket
from service.testing.live import free_port


def test_accepted_connections_have_tcp_nodelay() -> None:
    with listening_socket("127.0.0.1", free_port()) as listening:
        listening.listen()
        with socket.create_connection(listening.getsockname()[:2]):
            accepted, _ = listening.accept()
            with accepted:
                assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0


@pytest.mark.parametrize("given", ["--port", "REPUTE_PORT"])
def test_a_port_in_use_is_one_line_before_any_key_is_made(given: str, tmp_path: Path) -> None:
    """Fails if the store is opened (and its first admin key made and shown) before the port is bound, or
    if uvicorn's own bind (a log line and exit 1) is what meets the busy port."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("REPUTE_")}
    env["REPUTE_DATA_DIR"] = str(tmp_path / "data")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        command = [sys.executable, "-m", "service", "serve"]
        if given == "--port":
            command += ["--port", str(port)]
        else:
            env["REPUTE_PORT"] = str(port)
        served = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert (served.returncode, served.stdout) == (2, "")
    assert served.stderr.splitlines() == [
        f"error: port {port} is in use on 127.0.0.1; choose another with REPUTE_PORT (or --port)"
    ]
    assert not (tmp_path / "data").exists()
