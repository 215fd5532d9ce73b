-- Reputation events are append-only: idempotency holds at insert time (known ids are skipped and
-- every block carries a deduplication token), because the daily MV below sees every inserted block.
CREATE TABLE IF NOT EXISTS reputation_events {{on_cluster}}
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
    INDEX event_id_bloom event_id TYPE bloom_filter GRANULARITY 4
)
ENGINE = {{replicated}}MergeTree
PARTITION BY toYYYYMM(timestamp)
ORDER BY (tenant, identity, timestamp, event_id)
TTL toDateTime(timestamp) + INTERVAL 3 YEAR
SETTINGS ttl_only_drop_parts = 1, non_replicated_deduplication_window = 10000;

-- Sums and counts per (tenant, identity, category, UTC day): never averages. The sums are Decimal so
-- that adding them is exact and independent of part and merge order: the same events always read back
-- as the same bytes (Float64 sums drift by an ulp with the order ClickHouse happens to add them in).
-- Yearly partitions: the table is small, and a point read of one identity probes a part per partition.
CREATE TABLE IF NOT EXISTS reputation_daily {{on_cluster}}
(
    tenant          LowCardinality(String),
    identity        String,
    category        LowCardinality(String),
    day             Date,
    weighted_sum    SimpleAggregateFunction(sum, Decimal128(18)),
    weight_sum      SimpleAggregateFunction(sum, Decimal128(18)),
    events          SimpleAggregateFunction(sum, UInt64),
    positive_events SimpleAggregateFunction(sum, UInt64),
    negative_events SimpleAggregateFunction(sum, UInt64),
    failures        SimpleAggregateFunction(sumMap, Map(String, UInt64))
)
ENGINE = {{replicated}}AggregatingMergeTree
PARTITION BY toYear(day)
ORDER BY (tenant, identity, category, day)
TTL day + INTERVAL 3 YEAR
SETTINGS ttl_only_drop_parts = 1, non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS reputation_daily_mv {{on_cluster}} TO reputation_daily AS
SELECT
    tenant,
    identity,
    category,
    toDate(timestamp, 'UTC') AS day,
    sum(toDecimal128(score_delta * confidence * weight, 18)) AS weighted_sum,
    sum(toDecimal128(confidence * weight, 18)) AS weight_sum,
    countIf(weight > 0) AS events,
    countIf(weight > 0 AND score_delta > 0) AS positive_events,
    countIf(weight > 0 AND score_delta < 0) AS negative_events,
    sumMapIf(map(substring(event_type, 9), toUInt64(1)), startsWith(event_type, 'failure.')) AS failures
FROM reputation_events
GROUP BY tenant, identity, category, day;

-- SPEC §7 for every identity at one day: the 90-day window ending at as_of, and the same 7 and 30 days
-- earlier. Category S_c = Σδ·c·w / Σc·w; overall = Σ w_c·S_c / Σ w_c over non-null categories, summed
-- in a fixed order so a read is reproducible to the bit; scores are reported on 0..100 as 50·(1 + S).
-- Used by the API (one identity), the refreshable MV (the fleet) and Grafana.
CREATE VIEW IF NOT EXISTS reputation_at {{on_cluster}} AS
SELECT
    tenant,
    identity,
    {as_of:Date} AS as_of,
    50 * (1 + (0.40 * ifNull(tq_now, 0) + 0.35 * ifNull(ec_now, 0) + 0.25 * ifNull(ih_now, 0))
        / nullIf(0.40 * (tq_now IS NOT NULL) + 0.35 * (ec_now IS NOT NULL) + 0.25 * (ih_now IS NOT NULL), 0)) AS overall,
    50 * (1 + tq_now) AS task_quality,
    50 * (1 + ec_now) AS economic,
    50 * (1 + ih_now) AS identity_hygiene,
    least(1., window_events / 100) AS confidence,
    window_events AS events,
    window_positive AS positive_events,
    window_negative AS negative_events,
    window_failures AS failures,
    50 * (1 + (0.40 * ifNull(tq_7d, 0) + 0.35 * ifNull(ec_7d, 0) + 0.25 * ifNull(ih_7d, 0))
        / nullIf(0.40 * (tq_7d IS NOT NULL) + 0.35 * (ec_7d IS NOT NULL) + 0.25 * (ih_7d IS NOT NULL), 0)) AS score_7d_ago,
    50 * (1 + (0.40 * ifNull(tq_30d, 0) + 0.35 * ifNull(ec_30d, 0) + 0.25 * ifNull(ih_30d, 0))
        / nullIf(0.40 * (tq_30d IS NOT NULL) + 0.35 * (ec_30d IS NOT NULL) + 0.25 * (ih_30d IS NOT NULL), 0)) AS score_30d_ago,
    overall - score_7d_ago AS trend_7d,
    overall - score_30d_ago AS trend_30d
FROM
(
    SELECT
        tenant,
        identity,
        anyIf(s_now, category = 'task_quality') AS tq_now,
        anyIf(s_now, category = 'economic') AS ec_now,
        anyIf(s_now, category = 'identity_hygiene') AS ih_now,
        anyIf(s_7d, category = 'task_quality') AS tq_7d,
        anyIf(s_7d, category = 'economic') AS ec_7d,
        anyIf(s_7d, category = 'identity_hygiene') AS ih_7d,
        anyIf(s_30d, category = 'task_quality') AS tq_30d,
        anyIf(s_30d, category = 'economic') AS ec_30d,
        anyIf(s_30d, category = 'identity_hygiene') AS ih_30d,
        sum(category_events) AS window_events,
        sum(category_positive) AS window_positive,
        sum(category_negative) AS window_negative,
        sumMap(category_failures) AS window_failures
    FROM
    (
        SELECT
            tenant,
            identity,
            category,
            toFloat64(sumIf(weighted_sum, day >= {as_of:Date} - 89))
                / nullIf(toFloat64(sumIf(weight_sum, day >= {as_of:Date} - 89)), 0) AS s_now,
            toFloat64(sumIf(weighted_sum, day BETWEEN {as_of:Date} - 96 AND {as_of:Date} - 7))
                / nullIf(toFloat64(sumIf(weight_sum, day BETWEEN {as_of:Date} - 96 AND {as_of:Date} - 7)), 0) AS s_7d,
            toFloat64(sumIf(weighted_sum, day BETWEEN {as_of:Date} - 119 AND {as_of:Date} - 30))
                / nullIf(toFloat64(sumIf(weight_sum, day BETWEEN {as_of:Date} - 119 AND {as_of:Date} - 30)), 0) AS s_30d,
            sumIf(events, day >= {as_of:Date} - 89) AS category_events,
            sumIf(positive_events, day >= {as_of:Date} - 89) AS category_positive,
            sumIf(negative_events, day >= {as_of:Date} - 89) AS category_negative,
            sumMapIf(failures, day >= {as_of:Date} - 89) AS category_failures
        FROM reputation_daily
        WHERE day BETWEEN {as_of:Date} - 119 AND {as_of:Date}
        GROUP BY tenant, identity, category
    )
    GROUP BY tenant, identity
);

CREATE TABLE IF NOT EXISTS reputation_scores {{on_cluster}}
(
    tenant           LowCardinality(String),
    identity         String,
    as_of            Date,
    computed_at      DateTime64(3, 'UTC'),
    overall          Nullable(Float64),
    task_quality     Nullable(Float64),
    economic         Nullable(Float64),
    identity_hygiene Nullable(Float64),
    confidence       Float64,
    events           UInt64,
    positive_events  UInt64,
    negative_events  UInt64,
    failures         Map(String, UInt64),
    score_7d_ago     Nullable(Float64),
    score_30d_ago    Nullable(Float64),
    trend_7d         Nullable(Float64),
    trend_30d        Nullable(Float64)
)
ENGINE = {{replicated}}ReplacingMergeTree(computed_at)
ORDER BY (tenant, identity);

CREATE MATERIALIZED VIEW IF NOT EXISTS reputation_scores_mv {{on_cluster}}
REFRESH EVERY {{reputation_refresh_seconds}} SECOND TO reputation_scores AS
SELECT *, now64(3, 'UTC') AS computed_at
FROM reputation_at(as_of = toDate(now(), 'UTC'));
