"""Compares a filled store's reputation reads with the brute-force oracle (tests/reputation_oracle.py):

    python scripts/oracle_check.py --store DIR [--tenant bench] [--identities 50] [--among 100000]

For a sample of the tenant's identities it reads each one's raw events and the credibilities set, computes
SPEC §7 with the oracle (today, and 30 and 100 days before) and compares it with the service's read of the
same identity. Run it on a store before and after a migration (bench/README.md, "Scale"): the reputation is
unchanged when both runs print no difference. Exits 1 on a difference."""

import argparse
import random
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from service.settings import Settings
from service.store import reputation as reputation_store
from service.store.client import Store
from service.store.rows import as_utc, dicts
from tests.reputation_oracle import Model, reputation

EVENTS = (
    "SELECT identity, category, event_type, score_delta, confidence, weight, timestamp, source, capped = 1 AS capped,"
    " sign FROM reputation_events WHERE tenant = {tenant:String} AND identity IN {identities:Array(String)}"
)
CREDIBILITIES = (
    "SELECT source, argMax(credibility, updated_at) FROM source_credibility WHERE tenant = {tenant:String}"
    " GROUP BY source"
)


def _differences(actual: dict[str, Any] | None, expected: dict[str, Any]) -> list[str]:
    if actual is None:
        return [] if expected["events"] == 0 and expected["overall"] is None else ["no row"]
    found = []
    for name, want in expected.items():
        got = actual[name]
        same = abs(got - want) <= 1e-9 if isinstance(want, float) and got is not None else got == want
        if not same:
            found.append(f"{name} {got!r} != {want!r}")
    return found


def check(store: Store, tenant: str, identities: list[str]) -> int:
    """Prints each difference; returns how many reads differed."""
    parameters = {"tenant": tenant, "identities": identities}
    events = [
        {**row, "timestamp": as_utc(row["timestamp"])}
        for row in dicts(store.client.query(EVENTS, parameters=parameters))
    ]
    rows = store.client.query(CREDIBILITIES, parameters={"tenant": tenant}).result_rows
    credibility: dict[str, float] = {source: value for source, value in rows}
    model = Model(credibility, reputation_store.half_life(store))
    today = datetime.now(UTC).date()
    differing = 0
    for identity in identities:
        for as_of in (today, today - timedelta(days=30), today - timedelta(days=100)):
            expected = reputation(events, identity, as_of, model)
            found = _differences(reputation_store.identity_reputation(store, tenant, identity, as_of), expected)
            if found:
                differing += 1
                print(f"{identity} as of {as_of}: {'; '.join(found)}")
    print(f"{len(identities)} identities, {len(events)} events, {differing} reads differing from the oracle")
    return differing


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, required=True, metavar="DIR", help="the data directory")
    parser.add_argument("--tenant", default="bench")
    parser.add_argument("--identities", type=int, default=50, help="how many, drawn among the identities filled")
    parser.add_argument("--among", type=int, default=100_000, help="the identities filled: agent-0 ... agent-(N-1)")
    args = parser.parse_args(argv)
    store = Store(Settings(data_dir=args.store))
    try:
        rng = random.Random(42)
        identities = sorted({f"agent-{rng.randrange(args.among)}" for _ in range(args.identities)})
        return 1 if check(store, args.tenant, identities) else 0
    finally:
        store.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
