"""The record a running embedded server keeps in its data directory, so other processes find it.

Only the process that owns the store writes it, once it listens; it is replaced atomically (a reader
never sees half of one) and removed by its writer alone, so it only ever names the live owner."""

import os
from pathlib import Path

import httpx
import orjson

from service.vocab import ADMIN_KEY_FILE, SERVER_FILE


def write_server_file(data_dir: Path, url: str) -> Path:
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / SERVER_FILE
    draft = path.with_name(f".{SERVER_FILE}.{os.getpid()}")
    draft.write_bytes(orjson.dumps({"url": url, "pid": os.getpid()}))
    draft.replace(path)
    return path


def remove_own_server_file(path: Path) -> None:
    """Removes the record if this process wrote it."""
    try:
        if orjson.loads(path.read_bytes()).get("pid") == os.getpid():
            path.unlink()
    except (OSError, ValueError, AttributeError):
        pass  # gone already, or not a record this process wrote


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
