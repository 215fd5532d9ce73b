-- Spans received over /v1/traces (SPEC §3.4), one row per span and run. `span_key` is the span's content
-- id, so a resent span, or the JSON and protobuf twins of one, collapse (reads take one row per key).
-- A trace belongs to the run its first spans were stored under; `is_root` marks spans without a parent
-- (a run settles once its root has arrived and nothing came for REPUTE_TRACE_SETTLE_SECONDS).
CREATE TABLE IF NOT EXISTS trace_spans {{on_cluster}}
(
    tenant          LowCardinality(String),
    run_id          String,
    span_key        String,
    trace_id        String,
    start_unix_nano UInt64,
    is_root         Bool,
    payload         String CODEC(ZSTD(3)),
    ingested_at     DateTime64(3, 'UTC'),
    INDEX trace_id_index trace_id TYPE bloom_filter GRANULARITY 4
)
ENGINE = {{replicated}}ReplacingMergeTree
PARTITION BY toYYYYMM(ingested_at)
ORDER BY (tenant, run_id, span_key)
TTL toDateTime(ingested_at) + INTERVAL {{run_events_ttl_days}} DAY
SETTINGS ttl_only_drop_parts = 1;
