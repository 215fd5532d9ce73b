"""Reads beside the caller's (Store.beside): on a client of their own, at the same time as the caller's,
and never waiting for a thread."""

import threading

import pytest
from clickhouse_connect.driver.exceptions import DatabaseError

from service.store import client as store_client
from service.store.client import Store


def test_a_read_beside_runs_on_a_client_of_its_own_while_the_caller_reads(store: Store) -> None:
    started, release = threading.Event(), threading.Event()

    def read() -> tuple[object, int]:
        started.set()
        release.wait(30)
        return store.client, store.client.query("SELECT 41 + 1").result_rows[0][0]

    pending = store.beside(read)
    assert started.wait(30)
    assert store.client.query("SELECT 1").result_rows == [(1,)]  # the caller reads meanwhile
    release.set()
    client, answer = pending.result(timeout=30)
    assert answer == 42 and client is not store.client


def test_an_error_beside_is_raised_by_its_result(store: Store) -> None:
    pending = store.beside(lambda: store.client.query("SELECT no_such_column"))
    with pytest.raises(DatabaseError, match="no_such_column"):
        pending.result(timeout=30)


def test_with_every_reader_busy_a_read_runs_in_the_caller_instead_of_waiting(store: Store) -> None:
    release = threading.Event()
    busy = [store.beside(lambda: release.wait(30)) for _ in range(store_client._READERS)]
    try:
        caller = threading.current_thread()
        pending = store.beside(lambda: (threading.current_thread(), store.client.query("SELECT 1").result_rows))
        assert pending.done() and pending.result() == (caller, [(1,)])
    finally:
        release.set()
    assert all(future.result(timeout=30) for future in busy)
    assert store.beside(threading.current_thread).result(timeout=30) is not caller  # idle again: beside
