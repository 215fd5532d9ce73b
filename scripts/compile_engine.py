"""Compiles the diagnosis engine with mypyc, in place (`make install` runs it): each module of
service/diagnosis then has an extension module beside its source, which Python imports first.

The engine is plain, fully typed Python; compiled, `diagnose()` of a 50-event run takes about a third less
time (README, Benchmarks). `diagnosis.py` stays interpreted: its Diagnosis caches the graph, the hash and
the canonical bytes with `cached_property`, which a compiled class does not keep, so to_dict() and
canonical_json() got slower compiled. Without a C compiler the build fails, this removes what it left, and
the engine runs from its sources, as it does from a wheel.

A manifest of the compiled sources' hashes lets `service.compiled` refuse to start an engine compiled
from other sources than the ones beside it (an edit after `make install`). This script writes it without
importing `service.compiled`: importing the package runs that check, which refuses exactly the stale
engine this script is run to replace.
"""

import hashlib
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENGINE = ROOT / "service" / "diagnosis"
INTERPRETED = {ENGINE / "diagnosis.py"}
MANIFEST = ENGINE / "compiled.json"
BUILD = "build/engine"  # the generated C and the objects, under ROOT


def engine_modules() -> list[Path]:
    return sorted(set(ENGINE.glob("*.py")) | set(ENGINE.glob("detectors/*.py")))


def compiled_sources() -> list[Path]:
    """The engine's modules but INTERPRETED and the packages' __init__ (re-exports and the registry: the
    shared library of the compiled modules lives in the package and imports it, so a compiled __init__
    would import itself)."""
    return [path for path in engine_modules() if path not in INTERPRETED and path.name != "__init__.py"]


def remove_compiled() -> None:
    for built in ENGINE.rglob("*.so"):
        built.unlink()
    MANIFEST.unlink(missing_ok=True)


def build(sources: list[Path]) -> None:
    from mypyc.build import mypycify
    from setuptools import setup

    def relative(paths: list[Path]) -> list[str]:
        return [str(path.relative_to(ROOT)) for path in paths]

    # mypy reads the whole engine (its types cross modules), mypyc compiles `sources`.
    modules = mypycify(
        relative(engine_modules()),
        only_compile_paths=relative(sources),
        group_name="service.diagnosis.compiled",
        target_dir=BUILD,
    )
    setup(
        name="repute-engine",
        ext_modules=modules,
        script_args=["--quiet", "build_ext", "--inplace", "--build-temp", BUILD, "--build-lib", BUILD],
    )


def main(arguments: list[str]) -> int:
    """Compiles the engine; with `--remove`, removes the compiled modules (`make clean-engine`)."""
    remove_compiled()
    if arguments == ["--remove"]:
        return 0
    sources = compiled_sources()
    try:
        build(sources)
    except (Exception, SystemExit) as exc:  # no compiler, or a failed build: the sources run as they are
        remove_compiled()
        print(f"the diagnosis engine was not compiled ({exc}); it runs from its sources", file=sys.stderr)
        return 1
    digests = {str(source.relative_to(ROOT)): hashlib.sha256(source.read_bytes()).hexdigest() for source in sources}
    MANIFEST.write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    os.chdir(ROOT)  # mypyc names the modules by their paths from here
    sys.exit(main(sys.argv[1:]))
