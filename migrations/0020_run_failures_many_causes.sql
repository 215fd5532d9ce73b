-- A run may have more than 255 causes (one per loop group: 768 tool calls in 256 groups are a 70 KiB
-- post, and a run may hold 100,000 events), but run_failures.position was a UInt8: the 256th cause could
-- not be stored. A key column's type cannot change in place, so the table is replaced by one of the same
-- shape with a UInt32 position, filled from itself in the same statement (atomic, and a repeated run of
-- this file converges).
REPLACE TABLE run_failures {{on_cluster}}
(
    tenant       LowCardinality(String),
    run_id       String,
    position     UInt32,
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
ORDER BY (tenant, run_id, position)
SETTINGS merge_selector_base = 10
AS SELECT * FROM run_failures;

{{embedded_only}}ALTER TABLE run_failures MODIFY SETTING min_bytes_for_full_part_storage = 10485760;
