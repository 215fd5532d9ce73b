"""Repute: deterministic run diagnosis and rolling agent reputation on ClickHouse."""

from service.compiled import check_engine

__version__ = "0.1.0"

check_engine()
