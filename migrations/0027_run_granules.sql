-- The runs table gets index granules of 256 rows (issue #42). It is sorted by run id, and its reads by run id
-- (a finalize's state and stored record, the runs list's latest versions of its candidates,
-- sql/run_latest_versions.sql) opened a granule of every part a run has rows in: up to 8,192 rows, fewer
-- where the adaptive granularity cuts them at 10 MiB (about 1,600 of the runs `python -m bench scale`
-- stores). The runs list's first page at 10,000,000 runs spent most of its time there (bench/README.md).
-- A table's granularity is fixed when it is created, so the table is replaced by one of the same columns,
-- order, index, projections and settings with smaller granules, filled from itself in the same statement
-- (as 0020 and 0024 did). Its projections (0019, 0021, 0025) take the same granules. The bloom filter of
-- parent runs summarizes 16 granules instead of 4: about as many rows as before.
--
-- The copy rewrites every run (minutes for millions of runs): run migrations before accepting writes (the
-- service does at start). A repeated run of this file converges: the REPLACE copies the table onto itself.
REPLACE TABLE runs {{on_cluster}}
(
    tenant                  LowCardinality(String),
    run_id                  String,
    version                 UInt64,
    identity                String,
    kind                    LowCardinality(String),
    suite                   String,
    task_id                 String,
    trial                   Nullable(UInt32),
    metadata                String CODEC(ZSTD(3)),
    created_at              DateTime64(3, 'UTC'),
    started_at              Nullable(DateTime64(3, 'UTC')),
    ended_at                Nullable(DateTime64(3, 'UTC')),
    run_at                  DateTime64(3, 'UTC'),
    finalized_at            Nullable(DateTime64(3, 'UTC')),
    status                  LowCardinality(String),
    execution_status        LowCardinality(String),
    failure_stage           LowCardinality(String),
    failure_reason_code     LowCardinality(String),
    failure_message         String,
    score                   Float64,
    -- the DEFAULT expressions are those of 0015 and 0021, unchanged
    caller_score            Nullable(Float64) DEFAULT if(
        status = 'finalized' AND execution_status != 'execution_error'
            AND (trust_score IS NULL OR score != trust_score / 100),
        score, NULL),
    trust_score             Nullable(UInt8),
    readiness               LowCardinality(String),
    primary_failure         LowCardinality(String),
    primary_impact          Int16 DEFAULT multiIf(
        primary_failure = 'infinite_tool_loop', toInt16(loop_control) - 100,
        primary_failure = 'memory_degradation', toInt16(memory_integrity) - 100,
        primary_failure = 'ignoring_tool_outputs', toInt16(tool_output_utilization) - 100,
        primary_failure = 'context_pollution', toInt16(context_health) - 100,
        primary_failure = 'cost_explosion', toInt16(cost_efficiency) - 100,
        primary_failure = 'skill_failure', toInt16(skill_adherence) - 100,
        0),
    loop_control            UInt8,
    memory_integrity        UInt8,
    tool_output_utilization UInt8,
    context_health          UInt8,
    cost_efficiency         UInt8,
    skill_adherence         UInt8,
    session_composite       Nullable(Float64),
    session_performance     String CODEC(ZSTD(3)),
    event_count             UInt32,
    tool_calls              UInt32,
    errors                  UInt32,
    total_tokens            UInt64,
    cost_usd                Nullable(Float64),
    diagnosis               String CODEC(ZSTD(3)),
    diagnosis_hash          String,
    content_hash            String DEFAULT '',
    profile                 String DEFAULT '',
    parent_run_id           String DEFAULT '',
    INDEX parent_run_index parent_run_id TYPE bloom_filter GRANULARITY 16,
    PROJECTION newest_first
    (
        SELECT
            tenant, run_id, version, identity, kind, suite, task_id, trial, run_at, created_at, finalized_at,
            status, execution_status, failure_stage, failure_reason_code, score, trust_score, readiness,
            primary_failure, primary_impact, session_composite, event_count, tool_calls, errors, total_tokens,
            parent_run_id, started_at, ended_at, cost_usd
        ORDER BY tenant, run_at, run_id
    ),
    PROJECTION identity_newest_first
    (
        SELECT
            tenant, run_id, version, identity, kind, suite, task_id, trial, run_at, created_at, finalized_at,
            status, execution_status, failure_stage, failure_reason_code, score, trust_score, readiness,
            primary_failure, primary_impact, session_composite, event_count, tool_calls, errors, total_tokens,
            parent_run_id, started_at, ended_at, cost_usd
        ORDER BY tenant, identity, run_at, run_id
    )
)
ENGINE = {{replicated}}ReplacingMergeTree(version)
ORDER BY (tenant, run_id)
SETTINGS index_granularity = 256, merge_selector_base = 10, deduplicate_merge_projection_mode = 'rebuild'
AS SELECT * FROM runs;

{{embedded_only}}ALTER TABLE runs MODIFY SETTING min_bytes_for_full_part_storage = 10485760;
