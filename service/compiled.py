"""The diagnosis engine may run compiled (`make install` builds it with mypyc: scripts/compile_engine.py).
Its modules then have extension modules beside their sources, which Python imports instead of them, so an
edit to a source after the build would not run. `check_engine` refuses that: it compares the sources with
the hashes the build recorded. A checkout that was never compiled, and a wheel, run the sources."""

import hashlib
import json
from pathlib import Path

# Written by the build: each compiled source's path from the checkout's root -> its sha256 at build time.
MANIFEST = Path(__file__).resolve().parent / "diagnosis" / "compiled.json"


class StaleEngine(ImportError):
    pass


def changed_sources(manifest: Path = MANIFEST) -> list[str]:
    """The compiled sources that differ from what was compiled (none when the engine is not compiled)."""
    if not manifest.exists():
        return []
    recorded: dict[str, str] = json.loads(manifest.read_text())
    root = manifest.parents[2]
    return [
        path
        for path, digest in sorted(recorded.items())
        if not (root / path).exists() or hashlib.sha256((root / path).read_bytes()).hexdigest() != digest
    ]


def check_engine(manifest: Path = MANIFEST) -> None:
    if changed := changed_sources(manifest):
        raise StaleEngine(
            f"the compiled diagnosis engine is older than {', '.join(changed)}: run `make install` to compile "
            "it again, or `make clean-engine` to run the sources"
        )
