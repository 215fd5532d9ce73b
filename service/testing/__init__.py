"""Helpers shared by the tests and the benchmarks: synthetic runs (`factory`) and a real server on a
loopback port (`live`). Not used by the service itself."""
