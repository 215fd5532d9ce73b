"""The compiled engine (scripts/compile_engine.py) is refused once its sources change after the build."""

import hashlib
import json
from pathlib import Path

import pytest

from service.compiled import StaleEngine, changed_sources, check_engine


def _built(root: Path, sources: dict[str, bytes]) -> Path:
    """A checkout under `root` whose engine was compiled from `sources` (path -> content)."""
    for path, content in sources.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(content)
    manifest = root / "service" / "diagnosis" / "compiled.json"
    manifest.write_text(json.dumps({path: hashlib.sha256(content).hexdigest() for path, content in sources.items()}))
    return manifest


def test_an_engine_compiled_from_its_sources_runs(tmp_path: Path) -> None:
    manifest = _built(tmp_path, {"service/diagnosis/facts.py": b"x = 1\n", "service/diagnosis/graph.py": b"y = 2\n"})
    assert changed_sources(manifest) == []
    check_engine(manifest)


def test_an_edit_or_a_removal_after_the_build_is_refused_by_name(tmp_path: Path) -> None:
    manifest = _built(tmp_path, {"service/diagnosis/facts.py": b"x = 1\n", "service/diagnosis/graph.py": b"y = 2\n"})
    (tmp_path / "service/diagnosis/facts.py").write_bytes(b"x = 2\n")
    (tmp_path / "service/diagnosis/graph.py").unlink()
    assert changed_sources(manifest) == ["service/diagnosis/facts.py", "service/diagnosis/graph.py"]
    with pytest.raises(StaleEngine, match=r"older than service/diagnosis/facts\.py.*make install"):
        check_engine(manifest)


def test_an_engine_never_compiled_runs_its_sources(tmp_path: Path) -> None:
    assert changed_sources(tmp_path / "service" / "diagnosis" / "compiled.json") == []
