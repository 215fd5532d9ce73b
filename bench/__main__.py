"""`python -m bench [NAME ...]` (`make bench`): runs the benchmarks and prints one table.

Convention: every module `bench/<name>.py` that defines `main() -> list[tuple[str, str, str]]` is a
benchmark; each row is (metric, measured, target), target "-" when SPEC §13 sets none. With names, only
those modules run (e.g. `python -m bench diagnose`). A benchmark that fails prints its error as a row and
the command exits 1 after the table.
"""

import importlib
import pkgutil
import sys
import time
from collections.abc import Callable

from rich.console import Console
from rich.table import Table

import bench

Row = tuple[str, str, str]


def benchmarks(names: list[str]) -> dict[str, Callable[[], list[Row]]]:
    found = {}
    for module in pkgutil.iter_modules(bench.__path__):
        if module.name.startswith("_") or (names and module.name not in names):
            continue
        entry = getattr(importlib.import_module(f"bench.{module.name}"), "main", None)
        if callable(entry):
            found[module.name] = entry
    return found


def main(names: list[str]) -> int:
    console = Console()
    found = benchmarks(names)
    if unknown := sorted(set(names) - set(found)):
        console.print(f"no benchmark named {', '.join(unknown)}; have: {', '.join(sorted(benchmarks([])))}")
        return 2
    table = Table("benchmark", "metric", "measured", "target", title="Repute benchmarks (SPEC §13)")
    failed = False
    for name, run in found.items():
        console.print(f"running {name} ...", highlight=False)
        started = time.perf_counter()
        try:
            rows = run()
        except Exception as exc:  # one broken benchmark must not hide the others' figures
            failed = True
            rows = [("failed", f"{type(exc).__name__}: {exc}", "-")]
        for metric, measured, target in rows:
            table.add_row(name, metric, measured, target)
        console.print(f"  {name} took {time.perf_counter() - started:.0f} s", highlight=False)
    console.print(table)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
