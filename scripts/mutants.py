"""`make mutants`: mutation testing with cosmic-ray. Each target module is broken on purpose, one small change
(a mutant) at a time, in a copy of the tree of its own, and the focused tests that exercise it are run: a
mutant the tests pass with "survived", which means no test holds that line to its meaning. Prints each
module's counts and every survivor (line, operator, diff); docs/testing.md says how to read them.

    python scripts/mutants.py [--only NAME ...] [--jobs N]
    python scripts/mutants.py --recheck [--only NAME ...]   # the last run's survivors, against today's tests

Operators: the replacements that make a different program on purpose (+ to -, * to /, == to !=, < to <=,
in to not in, is to is not, numbers +/-1, and/or swaps, not added, loops run zero times, exceptions,
decorators) rather than every operator for every other, which mostly makes programs that cannot run."""

import argparse
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "build" / "mutants"
BIN = Path(sys.executable).parent
PYTEST = "python -m pytest -x -q -p no:cacheprovider --basetemp=../pytest"


@dataclass(frozen=True)
class Target:
    name: str
    module: str
    tests: tuple[str, ...]  # the fastest and most telling first: the first failure ends a mutant's run
    deselect: str = ""  # a pytest -k expression leaving out the slow tests that exercise something else


TARGETS = (
    Target("errors", "service/api/errors.py",
           ("tests/test_api_errors.py", "tests/test_api_store_down.py", "tests/test_api_edges.py",
            "tests/test_api_reliability.py"),
           "not serve_listens and not eight_concurrent and not sigkill"),
    Target("auth", "service/api/auth.py", ("tests/test_api_auth.py", "tests/test_tenant_isolation.py"),
           "not large_bodies"),
    Target("outcome", "service/outcome.py",
           ("tests/test_outcome.py", "tests/test_execution_errors_property.py", "tests/test_api_suites.py")),
    Target("model", "service/reputation/model.py",
           ("tests/test_reputation_emit.py", "tests/test_reputation_formula.py", "tests/test_reputation_report.py",
            "tests/test_reputation_sources.py")),
    Target("finalize", "service/services/finalize.py",
           ("tests/test_run_lifecycle.py", "tests/test_hostile_inputs.py", "tests/test_background.py",
            "tests/test_api_sessions.py", "tests/test_api_outcome_inputs.py", "tests/test_multi_agent_api.py",
            "tests/test_store_pipeline.py", "tests/test_pipeline_once.py")),
    Target("whole", "service/services/receivers/whole.py",
           ("tests/test_run_lifecycle.py", "tests/test_api_sessions.py", "tests/test_api_concurrent_reposts.py",
            "tests/test_api_outcome_inputs.py", "tests/test_store_pipeline.py", "tests/test_run_claims.py",
            "tests/test_multi_agent_api.py")),
    Target("writes", "service/api/writes.py",
           ("tests/test_writes.py", "tests/test_background.py", "tests/test_fairness.py")),
    Target("collector", "service/collector.py", ("tests/test_collector.py", "tests/test_writes.py")),
    Target("memo", "service/memo.py", ("tests/test_memo.py", "tests/test_diagnosis_hashes.py")),
    Target("priority", "service/priority.py",
           ("tests/test_priority.py", "tests/test_writes.py", "tests/test_fairness.py")),
    Target("redaction", "service/otlp/redaction.py", ("tests/test_redaction.py",)),
    Target("trace_formats", "service/traces/formats.py",
           ("tests/test_trace_readers.py", "tests/test_traces_real.py", "tests/test_otlp_shapes.py",
            "tests/test_ingest_bad_files.py", "tests/test_ingest_formats.py")),
    Target("trace_index", "service/traces/index.py",
           ("tests/test_hostile_inputs.py", "tests/test_traces_agents.py", "tests/test_traces_mapping.py",
            "tests/test_traces_real.py")),
    Target("reputation", "service/store/reputation.py",
           ("tests/test_reputation_half_life.py", "tests/test_identity_exists.py",
            "tests/test_reputation_dedup_token.py", "tests/test_reputation_repair.py",
            "tests/test_reputation_idempotency.py", "tests/test_reputation_retractions.py",
            "tests/test_reputation_sources.py", "tests/test_reputation_rebuild.py", "tests/test_fleet_activity.py",
            "tests/test_fleet_refresh.py", "tests/test_identity_run_days.py", "tests/test_reputation_store.py"),
           "not equals_recomputation"),
    Target("unrecovered_error", "service/diagnosis/detectors/unrecovered_error.py",
           ("tests/test_errors_detectors.py", "tests/test_registry.py", "tests/test_errors_api.py",
            "tests/test_diagnosis_parity.py")),
    Target("tool_failures", "service/diagnosis/detectors/tool_failures.py",
           ("tests/test_errors_detectors.py", "tests/test_registry.py", "tests/test_errors_api.py",
            "tests/test_diagnosis_parity.py")),
)  # fmt: skip

KEPT_BINARY = "Add_Sub|Sub_Add|Mul_Div|Div_Mul|FloorDiv_Div|Mod_FloorDiv|Pow_Mul|BitOr_BitAnd|BitAnd_BitOr"
KEPT_COMPARISON = "Eq_NotEq|NotEq_Eq|Lt_LtE|LtE_Lt|Gt_GtE|GtE_Gt|Is_IsNot|IsNot_Is|In_NotIn|NotIn_In"
EXCLUDED_OPERATORS = (
    rf"core/ReplaceBinaryOperator_(?!({KEPT_BINARY})$)",
    rf"core/ReplaceComparisonOperator_(?!({KEPT_COMPARISON})$)",
)


def _focused_tests(tree: Path, target: Target) -> str:
    """The target's pytest arguments, with the test files this tree has (an older tree may lack some)."""
    files = " ".join(test for test in target.tests if (tree / test).exists())
    return f'{files} -k "{target.deselect}"' if target.deselect else files


def _config(tree: Path, target: Target) -> str:
    excluded = ", ".join(f"'{pattern}'" for pattern in EXCLUDED_OPERATORS)
    return f"""[cosmic-ray]
module-path = "{target.module}"
timeout = 600.0
excluded-modules = []
test-command = '{PYTEST} {_focused_tests(tree, target)}'

[cosmic-ray.distributor]
name = "local"

[cosmic-ray.filters.operators-filter]
exclude-operators = [{excluded}]
"""


def _copy_tree(home: Path, revision: str | None) -> None:
    """The tracked files of this checkout, as in the working tree or at `revision`, under home/repute."""
    tree = home / "repute"
    shutil.rmtree(home, ignore_errors=True)
    tree.mkdir(parents=True)
    if revision:
        archive = subprocess.run(["git", "archive", revision], cwd=ROOT, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    else:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
        for name in filter(None, listed.decode().split("\0")):
            path, copy = ROOT / name, tree / name
            if path.exists() or path.is_symlink():
                copy.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, copy, follow_symlinks=False)


def _original(module: str, revision: str | None) -> bytes:
    """The module as this checkout has it (at `revision`): an interrupted run may have left it mutated."""
    if revision is None:
        return (ROOT / module).read_bytes()
    return subprocess.run(["git", "show", f"{revision}:{module}"], cwd=ROOT, capture_output=True, check=True).stdout


def _run(command: list[str], tree: Path, log: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(tree), "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    with log.open("a") as out:
        subprocess.run(command, cwd=tree, env=env, stdout=out, stderr=subprocess.STDOUT, check=True)


def mutate(target: Target, revision: str | None, resume: bool) -> Path:
    """Runs every mutant of the target in a copy of the tree of its own; returns the session file. With
    `resume`, a session left unfinished (interrupted) goes on where it stopped."""
    home = WORK / (revision or "tree") / target.name
    tree, config, session, log = home / "repute", home / "config.toml", home / "session.sqlite", home / "log.txt"
    if not (resume and session.exists()):
        _copy_tree(home, revision)
        config.write_text(_config(tree, target))
        _run(["cosmic-ray", "init", str(config), str(session)], tree, log)
        _run(["cr-filter-operators", str(session), str(config)], tree, log)
        _run(["cosmic-ray", "baseline", str(config)], tree, log)  # the tests pass unmutated, or this stops
    (tree / target.module).write_bytes(_original(target.module, revision))
    _run(["cosmic-ray", "exec", str(config), str(session)], tree, log)
    return session


def report(target: Target, session: Path) -> str:
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome

    lines, counts = [], {"killed": 0, "survived": 0, "skipped": 0}
    with use_db(str(session), WorkDB.Mode.open) as db:
        for item, result in db.completed_work_items:
            if result.test_outcome == TestOutcome.SURVIVED:
                counts["survived"] += 1
                spec = item.mutations[0]
                lines.append(f"  survived: {spec.module_path}:{spec.start_pos[0]} {spec.operator_name}")
                lines.extend(f"    {line}" for line in (result.diff or "").splitlines() if line[:1] in "+-")
            elif result.worker_outcome == "skipped":
                counts["skipped"] += 1
            else:
                counts["killed"] += 1
    summary = f"{target.name} ({target.module}): {counts['killed']} killed, {counts['survived']} survived"
    return "\n".join([summary, *lines])


def recheck(target: Target, session: Path) -> str:
    """The survivors of an earlier run (`session`) made again, one at a time, in a fresh copy of this
    checkout, against the target's tests as they are now: the mutants killed since are the tests written
    for them. Only the survivors run (a mutant killed stays killed when tests are added, not when the module
    changes: after a change of the module, run the target whole)."""
    from cosmic_ray.mutating import mutate_and_test
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome

    with use_db(str(session), WorkDB.Mode.open) as db:
        survivors = [item for item, result in db.completed_work_items if result.test_outcome == TestOutcome.SURVIVED]
    home = WORK / "recheck" / target.name
    _copy_tree(home, None)
    tree, here = home / "repute", Path.cwd()
    os.environ.update(PYTHONPATH=str(tree), PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}")
    os.chdir(tree)  # the mutations name the module by its path in the tree
    try:
        results = [
            mutate_and_test(item.mutations, f"{PYTEST} {_focused_tests(tree, target)}", 600.0) for item in survivors
        ]
    finally:
        os.chdir(here)
    still = [(item, result) for item, result in zip(survivors, results, strict=True)
             if result.test_outcome == TestOutcome.SURVIVED]  # fmt: skip
    lines = [
        f"{target.name} ({target.module}): of {len(survivors)} survivors, {len(survivors) - len(still)} killed now"
    ]
    for item, result in still:
        spec = item.mutations[0]
        lines.append(f"  survives: {spec.module_path}:{spec.start_pos[0]} {spec.operator_name}")
        lines.extend(f"    {line}" for line in (result.diff or "").splitlines() if line[:1] in "+-")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", choices=[t.name for t in TARGETS], help="these targets only")
    parser.add_argument("--jobs", type=int, default=2, help="targets mutated at once (default 2)")
    parser.add_argument("--rev", help="mutate the code of this commit (default: the working tree)")
    parser.add_argument("--resume", action="store_true", help="go on with the sessions an interruption left")
    parser.add_argument("--recheck", action="store_true", help="the last run's survivors only, with today's tests")
    options = parser.parse_args()
    targets = [t for t in TARGETS if not options.only or t.name in options.only]
    if options.recheck:  # one target at a time: each runs in its own tree, and the process changes directory
        sessions = [WORK / (options.rev or "tree") / target.name / "session.sqlite" for target in targets]
        text = "\n".join(recheck(target, session) for target, session in zip(targets, sessions, strict=True))
        (WORK / (options.rev or "tree") / "rechecked.txt").write_text(text + "\n")
        print(text)
        return
    with ThreadPoolExecutor(options.jobs) as pool:
        sessions = list(pool.map(lambda target: mutate(target, options.rev, options.resume), targets))
    text = "\n".join(report(target, session) for target, session in zip(targets, sessions, strict=True))
    (WORK / (options.rev or "tree") / "survivors.txt").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
