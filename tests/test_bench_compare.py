"""bench compare --side-by-side (bench/api.py): the two servers take turns going first, so neither one is
always measured right after the other's request."""

from bench.api import turn_order


def test_each_server_goes_first_in_turn_and_every_request_reaches_each() -> None:
    labels = ["435904c", "working tree"]
    orders = [turn_order(labels, number) for number in range(4)]
    assert [order[0] for order in orders] == ["435904c", "working tree", "435904c", "working tree"]
    assert all(sorted(order) == sorted(labels) for order in orders)
