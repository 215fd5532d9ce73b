"""A failure type is one detector module plus one registry line: the dimension list, the stored columns,
the UI's vocabulary and the Grafana panel follow from the registry, and every generated file is current."""

from dataclasses import replace
from datetime import UTC, datetime

from service import codegen
from service.diagnosis import ALL_DETECTORS, DETECTORS, DIMENSIONS, FAILURE_TYPES, Detector
from service.store.client import Store
from service.store.records import RUN_COLUMNS, RunRecord, run_record, run_row

AT = datetime(2026, 11, 20, tzinfo=UTC)


def _seventh() -> Detector:
    """A hypothetical new detector, as its module would declare it."""
    return replace(DETECTORS[0], failure_type="prompt_injection", dimension="injection_resistance")


def test_dimensions_and_failure_types_come_from_the_registry() -> None:
    """Critiqor's six have the dimensions; the detectors beyond Critiqor (SPEC §4.2) have none and no weight:
    their impacts are taken off the trust score itself."""
    assert tuple(d.dimension for d in DETECTORS) == DIMENSIONS
    assert tuple(d.failure_type for d in ALL_DETECTORS) == FAILURE_TYPES
    assert len(set(DIMENSIONS)) == len(DETECTORS) and len(set(FAILURE_TYPES)) == len(ALL_DETECTORS)
    assert abs(sum(d.weight for d in ALL_DETECTORS) - 1.0) < 1e-12
    assert [(d.dimension, d.weight) for d in ALL_DETECTORS[len(DETECTORS) :]] == [(None, 0.0), (None, 0.0)]


def test_every_dimension_is_a_stored_column(embedded_store: Store) -> None:
    """A new detector's dimension needs a column: this says which migration to write."""
    columns = {
        name
        for (name,) in embedded_store.client.query(
            "SELECT name FROM system.columns WHERE database = currentDatabase() AND table = 'runs'"
        ).result_rows
    }
    missing = [d for d in DIMENSIONS if d not in columns]
    assert not missing, "add a migration: " + "; ".join(
        f"ALTER TABLE runs {{{{on_cluster}}}} ADD COLUMN IF NOT EXISTS {d} UInt8 DEFAULT 100" for d in missing
    )
    assert set(RUN_COLUMNS) <= columns


def test_a_run_record_maps_every_dimension_both_ways() -> None:
    record = RunRecord(
        tenant="t", run_id="r", identity="i", created_at=AT, run_at=AT,
        dimension_scores={d: 100 - n for n, d in enumerate(DIMENSIONS)},
    )  # fmt: skip
    row = dict(zip(RUN_COLUMNS, run_row(record), strict=True))
    assert [row[d] for d in DIMENSIONS] == [100 - n for n in range(len(DIMENSIONS))]
    assert run_record(row) == record


def test_a_seventh_detector_reaches_the_ui_and_grafana() -> None:
    registry = (*ALL_DETECTORS, _seventh())
    vocabulary = codegen.ui_vocabulary(registry)
    assert '"prompt_injection"]' in vocabulary and '"injection_resistance"]' in vocabulary
    query = codegen.dimension_scores_query(registry)
    assert all(f"avg({d.dimension}) AS {d.dimension}" in query for d in registry if d.dimension is not None)
    assert "None" not in query and "null" not in vocabulary  # the detectors without a dimension add no column


def test_generated_files_are_current() -> None:
    """Run `python -m service.codegen` after changing the vocabulary, the registry, sql/ or service/grafana.py."""
    stale = [path for path, content in codegen.rendered().items() if not path.exists() or path.read_text() != content]
    assert not stale, f"stale generated files (run python -m service.codegen): {stale}"
