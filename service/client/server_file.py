"""The record a running embedded server keeps in its data directory, so other processes find it."""

import os
from pathlib import Path

import httpx
import orjson

from service.vocab import ADMIN_KEY_FILE, SERVER_FILE


def write_server_file(data_dir: Path, url: str) -> Path:
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / SERVER_FILE
    path.write_bytes(orjson.dumps({"url": url, "pid": os.getpid()}))
    return path


def running_server(data_dir: Path) -> str | None:
    """The URL of a live server that owns this data directory, if any."""
    path = data_dir / SERVER_FILE
    try:
        info = orjson.loads(path.read_bytes())
        os.kill(int(info["pid"]), 0)
        httpx.get(f"{info['url']}/healthz", timeout=2).raise_for_status()
        return str(info["url"])
    except (OSError, ValueError, KeyError, TypeError, httpx.HTTPError):
        return None


def operator_key(data_dir: Path) -> str | None:
    key = os.environ.get("REPUTE_API_KEY")
    if key:
        return key
    path = data_dir / ADMIN_KEY_FILE
    return path.read_text().strip() if path.exists() else None
