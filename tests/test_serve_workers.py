"""`repute serve --workers N` scales across processes on a ClickHouse server; the embedded store allows one
process, so there it is refused with one clear line before anything opens the store."""

import os
import subprocess
import sys
from pathlib import Path


def test_workers_are_refused_on_the_embedded_store(tmp_path: Path) -> None:
    env = {**os.environ, "REPUTE_DATA_DIR": str(tmp_path)}
    env.pop("REPUTE_CLICKHOUSE_URL", None)
    served = subprocess.run(
        [sys.executable, "-m", "service", "serve", "--workers", "2"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert served.returncode == 2  # could not do what was asked (README, exit codes)
    assert served.stderr.strip().splitlines() == [
        "error: --workers needs a ClickHouse server (REPUTE_CLICKHOUSE_URL): the embedded store allows one process"
    ]
    assert not (tmp_path / "clickhouse").exists()
