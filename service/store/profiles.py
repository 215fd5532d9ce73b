"""SQL for a tenant's diagnosis profiles and their rules (SPEC §4.1, migrations 0015 and 0021): one row per
write, the latest version of each name wins. A row without detectors was written before profiles named
them, and runs every detector."""

from datetime import datetime

from service.diagnosis import Profile
from service.diagnosis.built_in import EVERY_DETECTOR
from service.profiles import Placed
from service.store import writer
from service.store.client import Store
from service.store.queries import load
from service.store.records import next_version
from service.store.rows import dicts


def set_profile(store: Store, tenant: str, placed: Placed, now: datetime) -> None:
    profile = placed.profile
    row = [
        tenant, profile.name, profile.tokens_high, profile.tokens_critical, profile.tokens_per_point,
        profile.duplicates, sorted(profile.detectors), list(placed.identities), list(placed.inputs), next_version(now),
    ]  # fmt: skip
    writer.profile(store, row)


def tenant_profiles(store: Store, tenant: str) -> list[Placed]:
    """The tenant's own profiles (and its rules for built-in ones), by name."""
    rows = dicts(store.client.query(load("profiles_list"), parameters={"tenant": tenant}))
    return [
        Placed(
            Profile(
                row["name"],
                row["tokens_high"],
                row["tokens_critical"],
                row["tokens_per_point"],
                row["duplicates"],
                frozenset(row["detectors"]) or EVERY_DETECTOR,
            ),
            tuple(row["identities"]),
            tuple(row["inputs"]),
        )
        for row in rows
    ]
