-- Retractions: how a stored event stops counting without rewriting anything (`repute reputation rebuild`,
-- service/reputation/rebuild.py). Events stay append-only and the aggregates stay sums, so an event is
-- undone by a second row, its retraction: sign -1 and otherwise the exact fields of the event it retracts
-- (same tenant, identity, category, day, source, δ, c, w, type, reference), plus attributes['retracts'] =
-- the retracted event's id. Every sum folds the sign, so an event and its retraction add up to exactly
-- nothing: Σδ·c·w and Σc·w (exact Decimal, so -x + x is 0 to the bit), the counts of events with
-- weight > 0, the positive and negative ones, and the failures by type. A correction event could not do
-- that (it would add to Σc·w, the counts and confidence), nor could a credibility (every run event has
-- the source `repute`). Rows stored before this migration read sign 1.
ALTER TABLE reputation_events {{on_cluster}} ADD COLUMN IF NOT EXISTS sign Int8 DEFAULT 1;

-- The daily aggregates' counts become signed (a retraction subtracts 1). The view that feeds the table is
-- dropped first and re-created below with the signed query: run migrations before accepting writes (the
-- service does at start), as for 0006: an event stored while the view is absent would never be counted.
-- Changing UInt64 to Int64 keeps every stored count (they are far below 2^63).
DROP VIEW IF EXISTS reputation_daily_sources_mv {{on_cluster}};

ALTER TABLE reputation_daily_sources {{on_cluster}}
    MODIFY COLUMN events SimpleAggregateFunction(sum, Int64),
    MODIFY COLUMN positive_events SimpleAggregateFunction(sum, Int64),
    MODIFY COLUMN negative_events SimpleAggregateFunction(sum, Int64),
    MODIFY COLUMN failures SimpleAggregateFunction(sumMap, Map(String, Int64));

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

-- The daily table of 0002 (without sources) is no longer fed: its view was a second aggregation on
-- every reputation insert, a measured part of a single finalize's cost (issue #14), for two readers that
-- now read reputation_daily_sources (the dashboards' identity list, the alerts' tenants). The table and
-- its rows stay: nothing stored is deleted.
DROP VIEW IF EXISTS reputation_daily_mv {{on_cluster}};

-- reputation_at of 0006 with one change: a failure type whose events were all retracted sums to 0 (sumMap
-- keeps zero entries) and is left out, as if it had never been counted. The counts are signed sums now;
-- net of retractions they are never negative, so reputation_scores keeps its unsigned columns.
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
        mapFilter((failure, count) -> count != 0, sumMapIf(category_failures, offset_days = 0)) AS window_failures
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
