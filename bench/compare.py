"""`python -m bench compare REV [NAME ...] [--rounds N]`: the same benchmarks, from this checkout's bench/, run
against the service of commit REV and against the working tree's, alternating round by round on the same
machine, so a change's cost is seen beside its parent's whatever else the machine is doing. Prints one
table: each figure of each round, REV's beside the working tree's.

REV's service is checked out once under build/compare/ (a detached git worktree). A benchmark that cannot
run against an older service (it uses a function that did not exist yet) shows its error as a row; the
API benchmark (`api`, through HTTP only) runs against any commit.

`--side-by-side` measures the API benchmark's figures with both services serving at once, request by
request in turn (bench/api.py, `side_by_side`): the host's drift over a round, which moves a figure as much
as a change does, then falls on both alike."""

import argparse
import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from rich.console import Console
from rich.table import Table

from bench import api
from bench._server import load_average

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "build" / "compare"
Row = tuple[str, str, str, str]  # benchmark, metric, measured, target


def checkout(rev: str) -> tuple[str, Path]:
    """(the commit's short hash, a worktree of it under build/compare/), made once."""
    sha = subprocess.run(
        ["git", "rev-parse", "--short=9", f"{rev}^{{commit}}"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    tree = BUILD / sha
    if not (tree / "service").is_dir():
        BUILD.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "worktree", "add", "--detach", "--force", str(tree), sha], cwd=ROOT, check=True)
    return sha, tree


def _beside(label: str, service_tree: Path) -> Path:
    """A directory where `bench` is this checkout's and `service` the given tree's."""
    place = BUILD / f"run-{label}"
    place.mkdir(parents=True, exist_ok=True)
    for name, target in (("bench", ROOT / "bench"), ("service", service_tree / "service")):
        link = place / name
        if link.is_symlink() and link.resolve() != target.resolve():
            link.unlink()
        if not link.exists():
            link.symlink_to(target)
    return place


def run_against(label: str, service_tree: Path, names: list[str]) -> list[Row]:
    place = _beside(label, service_tree)
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--json", *names],
        cwd=place, env={**os.environ, "PYTHONPATH": str(place)}, capture_output=True, text=True,
    )  # fmt: skip
    rows = [tuple(json.loads(line)) for line in done.stdout.splitlines() if line.startswith("[")]
    if not rows:
        return [("-", "failed", (done.stderr.strip().splitlines() or ["no output"])[-1], "-")]
    return rows


def cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench compare")
    parser.add_argument("rev", help="the commit to compare the working tree with (e.g. main, 435904c)")
    parser.add_argument("names", nargs="*", default=["api"], help="benchmarks (default: api)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds, each running REV then the working tree")
    parser.add_argument(
        "--side-by-side", action="store_true", help="the API figures with both served at once, request by request"
    )
    args = parser.parse_args(argv)
    sha, tree = checkout(args.rev)
    trees = {sha: tree, "working tree": ROOT}
    figures: dict[tuple[str, str], dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    targets: dict[tuple[str, str], str] = {}
    console = Console(width=None if sys.stdout.isatty() else 160)
    for number in range(args.rounds):
        console.print(f"round {number + 1} ...", highlight=False)
        for label, rows in _round(trees, args.names, args.side_by_side):
            for benchmark, metric, measured, target in rows:
                figures[(benchmark, metric)][label].append(measured)
                targets[(benchmark, metric)] = target
    table = Table("benchmark", "metric", sha, "working tree", "target", title=f"{sha} beside the working tree")
    for key, by_tree in figures.items():
        table.add_row(*key, " / ".join(by_tree[sha]), " / ".join(by_tree["working tree"]), targets[key])
    console.print(table)
    return 0


def _round(trees: dict[str, Path], names: list[str], side_by_side: bool) -> list[tuple[str, list[Row]]]:
    """One round: each tree's rows, label by label."""
    if not side_by_side:
        return [(label, run_against(label.replace(" ", "-"), tree, names)) for label, tree in trees.items()]
    places = {label: _beside(label.replace(" ", "-"), tree) for label, tree in trees.items()}
    measured = api.side_by_side(places)
    load = (load_average(), "after the round", "-")
    return [(label, [("api", *row) for row in [*api.rows(figures), load]]) for label, figures in measured.items()]
