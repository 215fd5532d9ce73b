"""`python -m bench [NAME ...]` (`make bench`): runs the benchmarks and prints one table.

Convention: every module `bench/<name>.py` that defines `main() -> list[tuple[str, str, str]]` is a
benchmark; each row is (metric, measured, target), target "-" when SPEC §13 sets none. With names, only
those modules run (e.g. `python -m bench diagnose`). A benchmark that fails (or fails to import) shows its
error as a row, and the command exits 1 after the table.

A benchmark with options of its own (COMMANDS) runs alone, never in the table: `python -m bench scale
--events 1000000` (bench/scale.py, SPEC §14; the default fills 100,000,000 events, which takes hours here);
`python -m bench compare REV [NAME ...]` runs benchmarks against commit REV's service and the working
tree's, alternating (bench/compare.py). `--json` prints each row as a JSON array instead of the table.
"""

import importlib
import json
import pkgutil
import sys
import time

from rich.console import Console
from rich.table import Table

import bench

Row = tuple[str, str, str]
COMMANDS = ("scale", "compare")


def module_names() -> list[str]:
    return sorted(
        m.name for m in pkgutil.iter_modules(bench.__path__) if not m.name.startswith("_") and m.name not in COMMANDS
    )


def run_benchmark(name: str) -> list[Row] | None:
    """The module's rows, or None when it defines no main()."""
    entry = getattr(importlib.import_module(f"bench.{name}"), "main", None)
    return entry() if callable(entry) else None


def main(names: list[str]) -> int:
    as_json = "--json" in names
    names = [name for name in names if name != "--json"]
    console = Console(width=None if sys.stdout.isatty() else 150, stderr=as_json)  # piped: one line per row
    if unknown := sorted(set(names) - set(module_names())):
        console.print(f"no benchmark named {', '.join(unknown)}; have: {', '.join(module_names())}")
        return 2
    table = Table("benchmark", "metric", "measured", "target", title="Repute benchmarks (SPEC §13)")
    failed = False
    for name in names or module_names():
        console.print(f"running {name} ...", highlight=False)
        started = time.perf_counter()
        try:
            rows = run_benchmark(name)
        except Exception as exc:  # one broken benchmark must not hide the others' figures
            failed = True
            rows = [("failed", f"{type(exc).__name__}: {exc}", "-")]
        for metric, measured, target in rows or ():
            table.add_row(name, metric, measured, target)
            if as_json:
                print(json.dumps([name, metric, measured, target]), flush=True)
        console.print(f"  {name} took {time.perf_counter() - started:.0f} s", highlight=False)
    if not as_json:
        console.print(table)
    return 1 if failed else 0


if __name__ == "__main__":
    if sys.argv[1:2] and sys.argv[1] in COMMANDS:
        sys.exit(importlib.import_module(f"bench.{sys.argv[1]}").cli(sys.argv[2:]))
    sys.exit(main(sys.argv[1:]))
