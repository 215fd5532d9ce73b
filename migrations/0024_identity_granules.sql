-- The tables read per identity get index granules of their size (issue #42). Each is sorted by identity,
-- but a read of one identity opened a granule of 8,192 rows in every part of the days it spans for the
-- identity's few dozen: `python -m bench scale` at 100,000,000 events read 14 granules of
-- reputation_daily_sources for one reputation (42 ms of 92) and 42 of reputation_events for one explanation.
-- A table's granularity is fixed when it is created, so both are replaced by tables of the same columns,
-- order and settings with smaller granules, filled from themselves in the same statement (as 0020 did):
-- 256 rows for the daily sums (Compact parts: a granule is read whole), 1,024 for the events (the primary
-- index, 1 entry a granule, stays in memory: at 10,000,000,000 events 10 million entries a copy).
--
-- The views that feed the daily tables are dropped first and made again afterwards, over the new tables:
-- run migrations before accepting writes (the service does at start), as for 0006 and 0010. A repeated run
-- of this file converges: each REPLACE copies the table onto itself.
DROP VIEW IF EXISTS reputation_daily_sources_mv {{on_cluster}};

REPLACE TABLE reputation_daily_sources {{on_cluster}}
(
    tenant          LowCardinality(String),
    identity        String,
    category        LowCardinality(String),
    day             Date,
    source          LowCardinality(String),
    weighted_sum    SimpleAggregateFunction(sum, Decimal128(18)),
    weight_sum      SimpleAggregateFunction(sum, Decimal128(18)),
    events          SimpleAggregateFunction(sum, Int64),
    positive_events SimpleAggregateFunction(sum, Int64),
    negative_events SimpleAggregateFunction(sum, Int64),
    failures        SimpleAggregateFunction(sumMap, Map(String, Int64))
)
ENGINE = {{replicated}}AggregatingMergeTree
PARTITION BY toYear(day)
ORDER BY (tenant, identity, category, day, source)
TTL day + INTERVAL 3 YEAR
SETTINGS ttl_only_drop_parts = 1, non_replicated_deduplication_window = 10000, index_granularity = 256,
    merge_selector_base = 10, min_bytes_for_wide_part = 1099511627776
AS SELECT * FROM reputation_daily_sources;

{{embedded_only}}ALTER TABLE reputation_daily_sources MODIFY SETTING min_bytes_for_full_part_storage = 10485760;

-- The DEFAULT expressions are those of 0002, 0006 and 0010, unchanged: what a row written before a column
-- existed reads as.
REPLACE TABLE reputation_events {{on_cluster}}
(
    tenant         LowCardinality(String),
    event_id       UUID,
    timestamp      DateTime64(3, 'UTC'),
    identity       String,
    category       LowCardinality(String),
    event_type     LowCardinality(String),
    score_delta    Float64,
    confidence     Float64 DEFAULT 1,
    weight         Float64 DEFAULT 1,
    reference_type LowCardinality(String),
    reference_id   String,
    attributes     Map(String, String),
    inserted_at    DateTime64(3, 'UTC') DEFAULT now64(3),
    source         LowCardinality(String) DEFAULT multiIf(
        reference_type IN ('run', 'session')
            OR event_type IN ('run_trust', 'session_performance', 'execution_error')
            OR startsWith(event_type, 'failure.'), 'repute',
        'legacy'),
    capped         UInt8 DEFAULT 0,
    sign           Int8 DEFAULT 1,
    INDEX event_id_bloom event_id TYPE bloom_filter GRANULARITY 4,
    INDEX inserted_at_minmax inserted_at TYPE minmax GRANULARITY 1
)
ENGINE = {{replicated}}MergeTree
PARTITION BY toYYYYMM(timestamp)
ORDER BY (tenant, identity, timestamp, event_id)
TTL toDateTime(timestamp) + INTERVAL 3 YEAR
SETTINGS ttl_only_drop_parts = 1, non_replicated_deduplication_window = 10000, index_granularity = 1024,
    merge_selector_base = 10
AS SELECT * FROM reputation_events;

{{embedded_only}}ALTER TABLE reputation_events MODIFY SETTING min_bytes_for_full_part_storage = 10485760;

-- The explanation's sums (sql/identity_explain.sql) per identity, category, event type, UTC day and source,
-- as the daily sums are (exact Decimal, every count signed: a retraction takes its event out): Σδ·c·w and
-- Σc·w of the events that count (not capped), their number (weight 0 included: an explanation lists the
-- failures), and the capped ones'. An explanation read the identity's raw events of 97 days through the
-- credibility and decay of each; it now reads these, and the raw events of the current window for its
-- references only.
CREATE TABLE IF NOT EXISTS reputation_daily_types {{on_cluster}}
(
    tenant        LowCardinality(String),
    identity      String,
    category      LowCardinality(String),
    event_type    LowCardinality(String),
    day           Date,
    source        LowCardinality(String),
    weighted_sum  SimpleAggregateFunction(sum, Decimal128(18)),
    weight_sum    SimpleAggregateFunction(sum, Decimal128(18)),
    events        SimpleAggregateFunction(sum, Int64),
    capped_events SimpleAggregateFunction(sum, Int64),
    capped_rows   SimpleAggregateFunction(sum, Int64)
)
ENGINE = {{replicated}}AggregatingMergeTree
PARTITION BY toYear(day)
ORDER BY (tenant, identity, day, category, event_type, source)
TTL day + INTERVAL 3 YEAR
SETTINGS ttl_only_drop_parts = 1, non_replicated_deduplication_window = 10000, index_granularity = 256,
    merge_selector_base = 10, min_bytes_for_wide_part = 1099511627776;

{{embedded_only}}ALTER TABLE reputation_daily_types MODIFY SETTING min_bytes_for_full_part_storage = 10485760;

-- Filled from the events stored, before the view below feeds it. A key is written by one output row, so
-- skipping the keys already present makes a repeated run (a migration cut short) add what is missing.
INSERT INTO reputation_daily_types
SELECT
    tenant,
    identity,
    category,
    event_type,
    toDate(timestamp, 'UTC') AS day,
    source,
    sumIf(toDecimal128(score_delta * confidence * weight, 18) * sign, capped = 0) AS weighted_sum,
    sumIf(toDecimal128(confidence * weight, 18) * sign, capped = 0) AS weight_sum,
    sumIf(toInt64(sign), capped = 0) AS events,
    sumIf(toInt64(sign), capped = 1) AS capped_events,
    toInt64(countIf(capped = 1)) AS capped_rows
FROM reputation_events
GROUP BY tenant, identity, category, event_type, day, source
HAVING (tenant, identity, category, event_type, day, source) NOT IN
    (SELECT tenant, identity, category, event_type, day, source FROM reputation_daily_types);

CREATE MATERIALIZED VIEW IF NOT EXISTS reputation_daily_types_mv {{on_cluster}} TO reputation_daily_types AS
SELECT
    tenant,
    identity,
    category,
    event_type,
    toDate(timestamp, 'UTC') AS day,
    source,
    sumIf(toDecimal128(score_delta * confidence * weight, 18) * sign, capped = 0) AS weighted_sum,
    sumIf(toDecimal128(confidence * weight, 18) * sign, capped = 0) AS weight_sum,
    sumIf(toInt64(sign), capped = 0) AS events,
    sumIf(toInt64(sign), capped = 1) AS capped_events,
    toInt64(countIf(capped = 1)) AS capped_rows
FROM reputation_events
GROUP BY tenant, identity, category, event_type, day, source;

-- The daily sums' view of 0010, unchanged, over the new tables.
CREATE MATERIALIZED VIEW IF NOT EXISTS reputation_daily_sources_mv {{on_cluster}} TO reputation_daily_sources AS
SELECT
    tenant,
    identity,
    category,
    toDate(timestamp, 'UTC') AS day,
    source,
    sum(toDecimal128(score_delta * confidence * weight, 18) * sign) AS weighted_sum,
    sum(toDecimal128(confidence * weight, 18) * sign) AS weight_sum,
    sumIf(toInt64(sign), weight > 0) AS events,
    sumIf(toInt64(sign), weight > 0 AND score_delta > 0) AS positive_events,
    sumIf(toInt64(sign), weight > 0 AND score_delta < 0) AS negative_events,
    sumMapIf(map(substring(event_type, 9), toInt64(sign)), startsWith(event_type, 'failure.')) AS failures
FROM reputation_events
WHERE capped = 0
GROUP BY tenant, identity, category, day, source;
