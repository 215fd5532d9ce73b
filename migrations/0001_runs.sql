-- Runs: one row per version of a run (open, then finalized); reads take the latest version.
-- Sort keys hold only columns that never change for a run.
CREATE TABLE IF NOT EXISTS runs {{on_cluster}}
(
    tenant              LowCardinality(String),
    run_id              String,
    version             UInt64,
    identity            String,
    kind                LowCardinality(String),
    suite               String,
    task_id             String,
    trial               Nullable(UInt32),
    metadata            String CODEC(ZSTD(3)),
    created_at          DateTime64(3, 'UTC'),
    started_at          Nullable(DateTime64(3, 'UTC')),
    ended_at            Nullable(DateTime64(3, 'UTC')),
    run_at              DateTime64(3, 'UTC'),
    finalized_at        Nullable(DateTime64(3, 'UTC')),
    status              LowCardinality(String),
    execution_status    LowCardinality(String),
    failure_stage       LowCardinality(String),
    failure_reason_code LowCardinality(String),
    failure_message     String,
    score               Float64,
    trust_score         Nullable(UInt8),
    readiness           LowCardinality(String),
    primary_failure     LowCardinality(String),
    loop_control            UInt8,
    memory_integrity        UInt8,
    tool_output_utilization UInt8,
    context_health          UInt8,
    cost_efficiency         UInt8,
    skill_adherence         UInt8,
    session_composite   Nullable(Float64),
    session_performance String CODEC(ZSTD(3)),
    event_count         UInt32,
    tool_calls          UInt32,
    errors              UInt32,
    total_tokens        UInt64,
    diagnosis           String CODEC(ZSTD(3)),
    diagnosis_hash      String
)
ENGINE = {{replicated}}ReplacingMergeTree(version)
ORDER BY (tenant, run_id);

-- Raw events of a run, in order. seq is the event's position in the run.
CREATE TABLE IF NOT EXISTS run_events {{on_cluster}}
(
    tenant      LowCardinality(String),
    run_id      String,
    seq         UInt32,
    event_id    String,
    event_type  LowCardinality(String),
    timestamp   Nullable(DateTime64(3, 'UTC')),
    payload     String CODEC(ZSTD(3)),
    ingested_at DateTime64(3, 'UTC')
)
ENGINE = {{replicated}}ReplacingMergeTree
PARTITION BY toYYYYMM(ingested_at)
ORDER BY (tenant, run_id, seq)
TTL toDateTime(ingested_at) + INTERVAL {{run_events_ttl_days}} DAY
SETTINGS ttl_only_drop_parts = 1;

-- One row per detected cause of a finalized run (execution errors have none: they are not quality evidence).
CREATE TABLE IF NOT EXISTS run_failures {{on_cluster}}
(
    tenant       LowCardinality(String),
    run_id       String,
    position     UInt8,
    identity     String,
    run_at       DateTime64(3, 'UTC'),
    failure_type LowCardinality(String),
    severity     LowCardinality(String),
    impact_score Int16,
    is_primary   Bool,
    description  String,
    causal_chain String,
    evidence     Array(String) CODEC(ZSTD(3)),
    remediation  String
)
ENGINE = {{replicated}}ReplacingMergeTree
ORDER BY (tenant, run_id, position);
