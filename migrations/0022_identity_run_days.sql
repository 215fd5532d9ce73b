-- What an identity's runs say, per UTC day, without reading `runs` (issue #42): one row per finalized run,
-- sorted by identity and day, with the figures one agent's report, the fleet and `/history` read (runs,
-- execution errors, unsafe verdicts, trust, the last run's time, the primary failure and its impact). Reads
-- of `runs` for these figures took each run's latest version from the projection identity_newest_first,
-- one granule of 8,192 rows per part for an identity's few dozen runs (`python -m bench scale`: 56 ms of a
-- report's 92 at 100,000,000 events).
--
-- The finalize writes a run's row beside its raw events and causes (service/services/finalize.py), before
-- its reputation events and its `runs` row, and a rebuild's re-diagnosis writes the run's new version
-- beside its new causes. A run's rows share (identity, day, run_id) (a re-diagnosis keeps the run's time),
-- and the latest version replaces the others (ReplacingMergeTree by version), so a finalize cut short and
-- retried, or a run re-diagnosed, never counts twice; reads take each run's latest version (argMax by
-- version per run), which also folds a retried finalize of a run without event times that crossed
-- midnight (two days, one run). `written_at` says when a row was written: the fleet's refresh recomputes
-- the identities whose rows are new (migrations/0023).
--
-- An index granule of 256 rows (the default 8,192 is fixed when a table is created): an identity's read
-- reads about one granule a part. Parts stay Compact (its readers read whole rows: 0012) and, on the
-- embedded engine, Packed under 10 MiB (0013); small parts merge less eagerly (0011).
CREATE TABLE IF NOT EXISTS identity_run_days {{on_cluster}}
(
    tenant           LowCardinality(String),
    identity         String,
    day              Date,
    run_id           String,
    version          UInt64,
    run_at           DateTime64(3, 'UTC'),
    execution_status LowCardinality(String),
    readiness        LowCardinality(String),
    trust_score      Nullable(UInt8),
    primary_failure  LowCardinality(String),
    primary_impact   Int16,
    written_at       DateTime64(3, 'UTC') DEFAULT now64(3),
    INDEX written_at_minmax written_at TYPE minmax GRANULARITY 1
)
ENGINE = {{replicated}}ReplacingMergeTree(version)
PARTITION BY toYear(day)
ORDER BY (tenant, identity, day, run_id)
SETTINGS index_granularity = 256, merge_selector_base = 10, min_bytes_for_wide_part = 1099511627776;

{{embedded_only}}ALTER TABLE identity_run_days MODIFY SETTING min_bytes_for_full_part_storage = 10485760;

-- Filled from the runs stored: each run's latest version when it is finalized, with its primary cause's
-- impact as the run keeps it (0021: read from its dimension for a run stored before). A repeated run of this
-- statement writes the same rows again, which the reads and the merges fold. Run migrations before accepting
-- writes (the service does at start).
INSERT INTO identity_run_days
    (tenant, identity, day, run_id, version, run_at, execution_status, readiness, trust_score, primary_failure,
     primary_impact)
SELECT
    tenant, identity, toDate(run_at, 'UTC'), run_id, version, run_at, execution_status, readiness, trust_score,
    primary_failure, primary_impact
FROM runs FINAL
WHERE status = 'finalized'
SETTINGS optimize_move_to_prewhere_if_final = 0;
