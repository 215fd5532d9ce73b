"""Where running embedded servers are recorded, so that other processes find them.

The process that owns a store writes two records once it listens, each replaced atomically (a reader
never sees half of one) and removed by its writer alone, so they only ever name a live owner:
- `<data dir>/server.json`, for commands that name that data directory (REPUTE_DATA_DIR, or the
  default `./.repute` of the directory they run in);
- `<user config dir>/repute/servers/<hash of the data dir>.json` (`$XDG_CONFIG_HOME`, else
  `~/.config`), so that a command run from any other directory finds the server too.
A record whose process is gone (a server killed with SIGKILL) is ignored, and the per-user one removed."""

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import httpx
import orjson

from service.vocab import ADMIN_KEY_FILE, SERVER_FILE


@dataclass(frozen=True)
class ServerRecord:
    url: str
    pid: int
    data_dir: Path


def registry_dir() -> Path:
    """The per-user folder of server records."""
    config = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(config) / "repute" / "servers"


def _write(path: Path, record: ServerRecord) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    draft = path.with_name(f".{path.name}.{os.getpid()}")
    draft.write_bytes(orjson.dumps({"url": record.url, "pid": record.pid, "data_dir": str(record.data_dir)}))
    draft.replace(path)
    return path


def _record(data_dir: Path, url: str) -> ServerRecord:
    return ServerRecord(url, os.getpid(), data_dir.resolve())


def write_server_file(data_dir: Path, url: str) -> Path:
    """The record in the data directory itself."""
    return _write(data_dir / SERVER_FILE, _record(data_dir, url))


def register_server(data_dir: Path, url: str) -> Path:
    """The per-user record, keyed by the data directory."""
    record = _record(data_dir, url)
    name = hashlib.sha256(str(record.data_dir).encode()).hexdigest()[:16]
    return _write(registry_dir() / f"{name}.json", record)


def remove_own_server_file(path: Path) -> None:
    """Removes a record if this process wrote it."""
    try:
        if orjson.loads(path.read_bytes()).get("pid") == os.getpid():
            path.unlink()
    except (OSError, ValueError, AttributeError):
        pass  # gone already, or not a record this process wrote


def _read(path: Path) -> ServerRecord | None:
    try:
        info = orjson.loads(path.read_bytes())
        return ServerRecord(str(info["url"]), int(info["pid"]), Path(info.get("data_dir") or path.parent))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's process: alive
    return True


def _answers(url: str) -> bool:
    try:
        return httpx.get(f"{url}/healthz", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def running_server(data_dir: Path) -> str | None:
    """The URL of a live server that owns this data directory, if any."""
    record = _read(data_dir / SERVER_FILE)
    if record is None or not _alive(record.pid) or not _answers(record.url):
        return None
    return record.url


def registered_servers() -> list[ServerRecord]:
    """The live servers of this user, wherever their data directories are, by data directory."""
    live = []
    for path in sorted(registry_dir().glob("*.json")):
        record = _read(path)
        if record is not None and not _alive(record.pid):
            path.unlink(missing_ok=True)
        elif record is not None and _answers(record.url):
            live.append(record)
    return sorted(live, key=lambda record: str(record.data_dir))


def operator_key(data_dir: Path) -> str | None:
    key = os.environ.get("REPUTE_API_KEY")
    if key:
        return key
    path = data_dir / ADMIN_KEY_FILE
    return path.read_text().strip() if path.exists() else None
