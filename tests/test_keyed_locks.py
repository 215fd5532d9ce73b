"""Keyed locks: callers sharing no key never wait on each other; a shared key serialises them; nothing
is kept once released."""

import threading

from service.store.keyed_locks import Key, KeyedLocks


def _enter_and_signal(locks: KeyedLocks, key: Key, entered: threading.Event) -> None:
    with locks.holding([key]):
        entered.set()


def test_other_keys_do_not_wait_and_the_same_key_does() -> None:
    locks = KeyedLocks()
    entered = threading.Event()
    waiter = threading.Thread(target=_enter_and_signal, args=(locks, ("t", "run-2"), entered))
    with locks.holding([("t", "run-1"), ("t", "run-2")]):
        with locks.holding([("t", "run-3")]):
            pass  # no key in common with the holder: taken at once
        waiter.start()
        assert not entered.wait(0.2)  # run-2 is held
    assert entered.wait(5)
    waiter.join(5)
    assert locks._locks == {}
