-- Raw OTLP log records of sessions (SPEC §3.2), kept until the session is finalized and for the
-- events' TTL after. record_id derives from the record's content, so a resent record, or the same
-- record sent once as JSON and once as protobuf, collapses into one (reads take LIMIT 1 BY record_id).
CREATE TABLE IF NOT EXISTS session_records {{on_cluster}}
(
    tenant         LowCardinality(String),
    session_id     String,
    record_id      String,
    time_unix_nano Nullable(Int64),
    payload        String CODEC(ZSTD(3)),
    ingested_at    DateTime64(3, 'UTC')
)
ENGINE = {{replicated}}ReplacingMergeTree
PARTITION BY toYYYYMM(ingested_at)
ORDER BY (tenant, session_id, record_id)
TTL toDateTime(ingested_at) + INTERVAL {{run_events_ttl_days}} DAY
SETTINGS ttl_only_drop_parts = 1;
