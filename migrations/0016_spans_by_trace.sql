-- Spans received over /v1/traces, kept by trace (SPEC §3.4, as rewritten on 2026-11-25). The run a
-- trace belongs to is read from all of its spans when the run is finalized: its conversation id (the
-- root span's, else the earliest span's that has one), else its trace id. So the run id does not depend
-- on how an exporter batched the spans (a BatchSpanProcessor that sends the root, the only span naming
-- the conversation, seconds after its children), and a trace-born run exists as a `runs` row only once
-- it is finalized. `conversation_id` is the span's own gen_ai.conversation.id, '' when it has none;
-- with is_root, the times and span_id it ranks the spans naming a conversation as the mapping does
-- (sql/trace_runs.sql). `span_key` is the span's content id, so resends and JSON/protobuf twins
-- collapse (reads take one row per key).
CREATE TABLE IF NOT EXISTS spans {{on_cluster}}
(
    tenant          LowCardinality(String),
    trace_id        String,
    span_key        String,
    span_id         String,
    conversation_id String,
    start_unix_nano UInt64,
    end_unix_nano   UInt64,
    is_root         Bool,
    payload         String CODEC(ZSTD(3)),
    ingested_at     DateTime64(3, 'UTC'),
    INDEX conversation_index conversation_id TYPE bloom_filter GRANULARITY 4
)
ENGINE = {{replicated}}ReplacingMergeTree
PARTITION BY toYYYYMM(ingested_at)
ORDER BY (tenant, trace_id, span_key)
TTL toDateTime(ingested_at) + INTERVAL {{run_events_ttl_days}} DAY
SETTINGS ttl_only_drop_parts = 1;

{{embedded_only}}ALTER TABLE spans MODIFY SETTING min_bytes_for_full_part_storage = 10485760;

-- The spans stored before, by the run they were first stored under: copied (a repeat of this copy
-- collapses by key); the old table is no longer written.
INSERT INTO spans
SELECT tenant, trace_id, span_key, JSONExtractString(payload, 'span_id'),
       JSONExtractString(payload, 'attributes', 'gen_ai.conversation.id'), start_unix_nano,
       JSONExtractUInt(payload, 'end_unix_nano'), is_root, payload, ingested_at
FROM trace_spans;
