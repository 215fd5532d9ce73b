"""Judge benchmark (SPEC §13: a 1 GB OTLP JSONL file at >= 100 MB/s, flat memory).

Writes a Collector file-exporter log by repeating the shared fixture with varied session ids and
times, then times `repute judge` on it in a subprocess (interpreter start included; the file is in
the page cache, so this measures the judge, not the disk) and reads the peak resident memory of that
process and its workers. Peak memory is measured at two sizes: flat memory means it does not grow.
A one-session log, the judge's worst case (its every line is decoded in both passes), is timed too.

REPUTE_BENCH_JUDGE_MB sets the large size in MiB (default 1024); the small one is an eighth of it.
"""

import itertools
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO.parent / "shared" / "fixtures" / "otlp_claude_code.jsonl"
MIB = 1024 * 1024
SIZE_MIB = int(os.environ.get("REPUTE_BENCH_JUDGE_MB", "1024"))
SESSIONS = 1000  # fixture copies get session ids from this many, in turn
TARGET_MIB_PER_S = 100
NANOS_PER_SECOND = 10**9
# In the fixture: its two session ids, and its times (19-digit nanoseconds).
_VARIED = re.compile(rb"sess-(?:a1|b2)|\d{19}")

Render = Callable[[int], bytes]


def main() -> list[tuple[str, str, str]]:
    small_mib = max(1, SIZE_MIB // 8)
    with tempfile.TemporaryDirectory(prefix="repute-bench-judge-") as folder:
        large, small, single = (Path(folder) / name for name in ("large.jsonl", "small.jsonl", "single.jsonl"))
        write_log(large, SIZE_MIB * MIB, SESSIONS)
        large_rate, large_peak = measure(large)
        large.unlink()
        write_log(small, small_mib * MIB, SESSIONS)
        _, small_peak = measure(small)
        write_log(single, small_mib * MIB, sessions=1)
        single_rate, _ = measure(single)
    return [
        (
            f"judge, {SIZE_MIB} MiB log of {2 * SESSIONS} sessions",
            f"{large_rate:.0f} MiB/s",
            f">= {TARGET_MIB_PER_S} MiB/s",
        ),
        (
            f"judge peak RSS, {small_mib} MiB vs {SIZE_MIB} MiB log",
            f"{small_peak:.0f} MiB vs {large_peak:.0f} MiB",
            "flat",
        ),
        (f"judge, {small_mib} MiB log of 2 sessions (worst case)", f"{single_rate:.0f} MiB/s", "-"),
    ]


def write_log(path: Path, size: int, sessions: int) -> None:
    """Fixture copies until `size` bytes: copy k uses session ids number k % sessions, its times
    shifted by k seconds."""
    pieces = _pieces(FIXTURE.read_bytes(), sessions)
    written = 0
    with path.open("wb", buffering=16 * MIB) as log:
        for copy in itertools.count():
            block = b"".join(piece if isinstance(piece, bytes) else piece(copy) for piece in pieces)
            log.write(block)
            written += len(block)
            if written >= size:
                return


def _pieces(template: bytes, sessions: int) -> list[bytes | Render]:
    """The template as literal bytes and renderers of the varied tokens."""
    pieces: list[bytes | Render] = []
    position = 0
    for match in _VARIED.finditer(template):
        pieces += [template[position : match.start()], _varied(match.group(), sessions)]
        position = match.end()
    return [*pieces, template[position:]]


def _varied(token: bytes, sessions: int) -> Render:
    if token.startswith(b"sess-"):
        return lambda copy: b"bench-%d-%s" % (copy % sessions, token[-2:])
    time = int(token)
    return lambda copy: b"%d" % (time + copy * NANOS_PER_SECOND)


def measure(log: Path) -> tuple[float, float]:
    """(MiB/s, peak RSS in MiB) of `repute judge` on the log."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as output:
        command = [sys.executable, "-m", "service", "judge", str(log)]
        process = subprocess.Popen(command, stdout=output, stderr=output, cwd=REPO)
        # wait4 gives the usage of this child (and of its workers, which it waits for), not of every
        # child this process ever had as RUSAGE_CHILDREN would.
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        elapsed = time.perf_counter() - started
        output.seek(0)
        printed = output.read().decode(errors="replace")
    if process.returncode != 0 or "recommendation:" not in printed:
        raise RuntimeError(f"repute judge failed ({process.returncode}): {printed[-500:]}")
    return log.stat().st_size / MIB / elapsed, usage.ru_maxrss / 1024


if __name__ == "__main__":
    for row in main():
        print(" | ".join(row))
