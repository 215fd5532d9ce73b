"""Repute: deterministic run diagnosis and rolling agent reputation on ClickHouse."""

__version__ = "0.1.0"
