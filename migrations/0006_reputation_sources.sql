-- SPEC §7.1: every event has a source (the key that posted it, or `repute` for the runs' own events),
-- a source has a credibility applied at read time, and posted events over the daily cap are stored but
-- flagged and never counted.
--
-- Rows stored before this migration keep their meaning without a rewrite: the DEFAULT expression below
-- is what a part written before the column existed reads as (and what a merge writes down), so old run
-- events read as `repute` and old posted signals as `legacy`. Never change this DEFAULT: it would change
-- the source of every old row that no merge has rewritten yet. The store always writes `source` itself.
ALTER TABLE reputation_events {{on_cluster}}
    ADD COLUMN IF NOT EXISTS source LowCardinality(String) DEFAULT multiIf(
        reference_type IN ('run', 'session')
            OR event_type IN ('run_trust', 'session_performance', 'execution_error')
            OR startsWith(event_type, 'failure.'), 'repute',
        'legacy'),
    ADD COLUMN IF NOT EXISTS capped UInt8 DEFAULT 0;

-- An admin's credibility in [0, 1] per (tenant, source); a source without a row has credibility 1.
-- Latest write wins (argMax by updated_at in reads; microseconds so that quick successive sets order).
CREATE TABLE IF NOT EXISTS source_credibility {{on_cluster}}
(
    tenant      LowCardinality(String),
    source      String,
    credibility Float64,
    updated_at  DateTime64(6, 'UTC')
)
ENGINE = {{replicated}}ReplacingMergeTree(updated_at)
ORDER BY (tenant, source);

-- The daily sums of reputation_daily (migration 0002), kept per source so that a credibility can weigh
-- them at read time, and without the capped events. The same exact Decimal sums.
CREATE TABLE IF NOT EXISTS reputation_daily_sources {{on_cluster}}
(
    tenant          LowCardinality(String),
    identity        String,
    category        LowCardinality(String),
    day             Date,
    source          LowCardinality(String),
    weighted_sum    SimpleAggregateFunction(sum, Decimal128(18)),
    weight_sum      SimpleAggregateFunction(sum, Decimal128(18)),
    events          SimpleAggregateFunction(sum, UInt64),
    positive_events SimpleAggregateFunction(sum, UInt64),
    negative_events SimpleAggregateFunction(sum, UInt64),
    failures        SimpleAggregateFunction(sumMap, Map(String, UInt64))
)
ENGINE = {{replicated}}AggregatingMergeTree
PARTITION BY toYear(day)
ORDER BY (tenant, identity, category, day, source)
TTL day + INTERVAL 3 YEAR
SETTINGS ttl_only_drop_parts = 1, non_replicated_deduplication_window = 10000;

-- Backfill from the events stored so far, before the view below starts feeding the table. A key is
-- written by one output row of the GROUP BY, so skipping the keys already present makes a repeated run
-- (a migration cut short) add exactly what is missing. Run migrations before accepting writes (the
-- service does at start): an event stored between this INSERT and the view's creation would be missed.
INSERT INTO reputation_daily_sources
SELECT
    tenant,
    identity,
    category,
    toDate(timestamp, 'UTC') AS day,
    source,
    sum(toDecimal128(score_delta * confidence * weight, 18)) AS weighted_sum,
    sum(toDecimal128(confidence * weight, 18)) AS weight_sum,
    countIf(weight > 0) AS events,
    countIf(weight > 0 AND score_delta > 0) AS positive_events,
    countIf(weight > 0 AND score_delta < 0) AS negative_events,
    sumMapIf(map(substring(event_type, 9), toUInt64(1)), startsWith(event_type, 'failure.')) AS failures
FROM reputation_events
WHERE capped = 0
GROUP BY tenant, identity, category, day, source
HAVING (tenant, identity, category, day, source) NOT IN
    (SELECT tenant, identity, category, day, source FROM reputation_daily_sources);

CREATE MATERIALIZED VIEW IF NOT EXISTS reputation_daily_sources_mv {{on_cluster}} TO reputation_daily_sources AS
SELECT
    tenant,
    identity,
    category,
    toDate(timestamp, 'UTC') AS day,
    source,
    sum(toDecimal128(score_delta * confidence * weight, 18)) AS weighted_sum,
    sum(toDecimal128(confidence * weight, 18)) AS weight_sum,
    countIf(weight > 0) AS events,
    countIf(weight > 0 AND score_delta > 0) AS positive_events,
    countIf(weight > 0 AND score_delta < 0) AS negative_events,
    sumMapIf(map(substring(event_type, 9), toUInt64(1)), startsWith(event_type, 'failure.')) AS failures
FROM reputation_events
WHERE capped = 0
GROUP BY tenant, identity, category, day, source;

-- The decay half-life in force (SPEC §7.1, REPUTE_REPUTATION_HALF_LIFE_DAYS; 0 = no decay, the flat
-- window). Every read takes it from here (the API, this view and so the fleet table, the alerts and
-- Grafana), so they always agree; the service writes the setting here when it differs
-- (service.store.reputation.sync_half_life), and this migration records the one it runs with.
CREATE TABLE IF NOT EXISTS reputation_model {{on_cluster}}
(
    half_life_days Float64,
    updated_at     DateTime64(6, 'UTC') DEFAULT now64(6)
)
ENGINE = {{replicated}}ReplacingMergeTree(updated_at)
ORDER BY tuple();

INSERT INTO reputation_model (half_life_days) VALUES ({{reputation_half_life_days}});

-- SPEC §7 and §7.1 for every identity at one day, replacing the view of migration 0002 (same columns).
-- The exact daily sums of each source are weighed by the source's credibility and, with a half-life h,
-- by the decay 2^(-(window end - day) / h), for the 90-day windows ending at as_of and 7 and 30 days
-- earlier (offset_days), then summed in Decimal again, so that a read is exact and reproducible to the
-- bit whatever the order of parts. Confidence's N is the sum of credibility x decay over the counted
-- events with weight > 0; the counts leave out sources of credibility 0. For one identity,
-- sql/identity_windows.sql and service.reputation.model.combine do the same arithmetic.
CREATE OR REPLACE VIEW reputation_at {{on_cluster}} AS
WITH
    ifNull((SELECT argMax(half_life_days, updated_at) FROM reputation_model), 0) AS half_life,
    {as_of:Date} - offset_days AS window_end,
    if(half_life = 0, 1., exp2(toInt32(day - window_end) / half_life)) AS decay
SELECT
    tenant,
    identity,
    {as_of:Date} AS as_of,
    50 * (1 + (0.40 * ifNull(tq_now, 0) + 0.35 * ifNull(ec_now, 0) + 0.25 * ifNull(ih_now, 0))
        / nullIf(0.40 * (tq_now IS NOT NULL) + 0.35 * (ec_now IS NOT NULL) + 0.25 * (ih_now IS NOT NULL), 0)) AS overall,
    50 * (1 + tq_now) AS task_quality,
    50 * (1 + ec_now) AS economic,
    50 * (1 + ih_now) AS identity_hygiene,
    least(1., window_evidence / 100) AS confidence,
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
        anyIf(score, category = 'task_quality' AND offset_days = 0) AS tq_now,
        anyIf(score, category = 'economic' AND offset_days = 0) AS ec_now,
        anyIf(score, category = 'identity_hygiene' AND offset_days = 0) AS ih_now,
        anyIf(score, category = 'task_quality' AND offset_days = 7) AS tq_7d,
        anyIf(score, category = 'economic' AND offset_days = 7) AS ec_7d,
        anyIf(score, category = 'identity_hygiene' AND offset_days = 7) AS ih_7d,
        anyIf(score, category = 'task_quality' AND offset_days = 30) AS tq_30d,
        anyIf(score, category = 'economic' AND offset_days = 30) AS ec_30d,
        anyIf(score, category = 'identity_hygiene' AND offset_days = 30) AS ih_30d,
        toFloat64(sumIf(category_evidence, offset_days = 0)) AS window_evidence,
        sumIf(category_events, offset_days = 0) AS window_events,
        sumIf(category_positive, offset_days = 0) AS window_positive,
        sumIf(category_negative, offset_days = 0) AS window_negative,
        sumMapIf(category_failures, offset_days = 0) AS window_failures
    FROM
    (
        SELECT
            tenant,
            identity,
            category,
            offset_days,
            toFloat64(sum(toDecimal128(weighted * credibility * decay, 18)))
                / nullIf(toFloat64(sum(toDecimal128(weight * credibility * decay, 18))), 0) AS score,
            sum(toDecimal128(day_events * credibility * decay, 18)) AS category_evidence,
            sumIf(day_events, credibility > 0) AS category_events,
            sumIf(day_positive, credibility > 0) AS category_positive,
            sumIf(day_negative, credibility > 0) AS category_negative,
            sumMapIf(day_failures, credibility > 0) AS category_failures
        FROM
        (
            SELECT
                tenant,
                identity,
                category,
                day,
                ifNull(known.credibility, 1.) AS credibility,
                weighted,
                weight,
                day_events,
                day_positive,
                day_negative,
                day_failures
            FROM
            (
                SELECT
                    tenant,
                    identity,
                    category,
                    day,
                    source,
                    toFloat64(sum(weighted_sum)) AS weighted,
                    toFloat64(sum(weight_sum)) AS weight,
                    sum(events) AS day_events,
                    sum(positive_events) AS day_positive,
                    sum(negative_events) AS day_negative,
                    sumMap(failures) AS day_failures
                FROM reputation_daily_sources
                WHERE day BETWEEN {as_of:Date} - 119 AND {as_of:Date}
                GROUP BY tenant, identity, category, day, source
            ) AS daily
            LEFT JOIN
            (
                SELECT tenant, source, toNullable(argMax(credibility, updated_at)) AS credibility
                FROM source_credibility
                GROUP BY tenant, source
            ) AS known USING (tenant, source)
        )
        ARRAY JOIN [0, 7, 30] AS offset_days
        WHERE day BETWEEN window_end - 89 AND window_end
        GROUP BY tenant, identity, category, offset_days
    )
    GROUP BY tenant, identity
);
