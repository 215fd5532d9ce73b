"""The decay half-life in force (REPUTE_REPUTATION_HALF_LIFE_DAYS): `sync_half_life` puts the setting in force
for every read when it differs, writes nothing when it does not, and "no decay" is a setting like any other.
The half-life is store-wide, so these tests run on a store of their own (`own_store`).

Broken on purpose (each seen red): `if half_life(store) == wanted` → `if not ...` (a change is never written,
and the first test fails); its `return False` → `True` (an unchanged setting reports a change); the stored
`float(wanted or 0)` → `wanted or 1`, `or -1` or `wanted and 0` (turning decay off stores a one-day, a
negative or no half-life: the "off again" read is not None, or the 7-day read is 0); `half_life`'s
`result_rows[0][0] or None` → `and None` (every read is None)."""

from service.settings import Settings
from service.store import reputation as reputation_store
from service.store.client import Store


def _setting(days: float | None) -> Settings:
    return Settings(reputation_half_life_days=days)


def test_a_new_half_life_is_put_in_force_once_and_turning_decay_off_is_stored_too(own_store: Store) -> None:
    reputation_store.sync_half_life(own_store, _setting(None))
    assert reputation_store.half_life(own_store) is None

    assert reputation_store.sync_half_life(own_store, _setting(7.0)) is True
    assert reputation_store.half_life(own_store) == 7.0
    assert reputation_store.sync_half_life(own_store, _setting(7.0)) is False  # in force already: nothing written

    assert reputation_store.sync_half_life(own_store, _setting(None)) is True
    assert reputation_store.half_life(own_store) is None
    assert reputation_store.sync_half_life(own_store, _setting(None)) is False


def test_the_newest_setting_wins_whatever_came_before(own_store: Store) -> None:
    for days in (30.0, 0.5, 90.0):
        reputation_store.sync_half_life(own_store, _setting(days))
        assert reputation_store.half_life(own_store) == days
