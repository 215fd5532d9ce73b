-- One daily view instead of two (issue #44). Every reputation event's insert ran two materialized views, one
-- into reputation_daily_sources (the formula's sums per identity, category, day and source) and one into
-- reputation_daily_types (the explanation's, the same sums per event type too): each view costs an insert
-- about as much as the table's own part, whatever its query (`python -m bench finalize_profile`; one view
-- fewer took 5-13 ms off a single run's finalize, bench/README.md). reputation_daily_types now also keeps
-- what only the daily sources kept, so the formula, the fleet's refresh, the sources list and the dashboards
-- read it, and reputation_daily_sources is no longer fed (as reputation_daily before it):
--   weighted_events  the counted events with a weight (weight > 0), signed: the formula's events and evidence;
--   positive_events, negative_events  those with a positive, a negative score delta;
--   counted_rows     the counted rows, unsigned (retractions included): the daily sources had a key exactly
--                    when its rows here sum to more than 0 (their view read `WHERE capped = 0`);
--   written_at       the latest arrival of a counted event (sql/identity_last_write.sql, migration 0026).
-- The failures a day's sums counted are the rows of event type `failure.<type>`: their `events`.
--
-- Views first, as for 0024: run migrations before accepting writes (the service does at start). The
-- repeatable definitions that read the daily sources (sql/definitions/) are made again over the new columns
-- once the migrations are applied.
DROP VIEW IF EXISTS reputation_daily_sources_mv {{on_cluster}};
DROP VIEW IF EXISTS reputation_daily_types_mv {{on_cluster}};

ALTER TABLE reputation_daily_types {{on_cluster}}
    ADD COLUMN IF NOT EXISTS weighted_events SimpleAggregateFunction(sum, Int64) DEFAULT 0,
    ADD COLUMN IF NOT EXISTS positive_events SimpleAggregateFunction(sum, Int64) DEFAULT 0,
    ADD COLUMN IF NOT EXISTS negative_events SimpleAggregateFunction(sum, Int64) DEFAULT 0,
    ADD COLUMN IF NOT EXISTS counted_rows SimpleAggregateFunction(sum, Int64) DEFAULT 0,
    ADD COLUMN IF NOT EXISTS written_at SimpleAggregateFunction(max, DateTime64(3, 'UTC'))
        DEFAULT toDateTime64(0, 3, 'UTC');

-- The new columns of the rows stored before, from the events stored: each key's difference between the
-- events' figures and the sums' is added (the other columns add 0), so a repeated run (a migration cut short)
-- adds only what is still missing.
INSERT INTO reputation_daily_types
    (tenant, identity, category, event_type, day, source, weighted_events, positive_events, negative_events,
     counted_rows, written_at)
SELECT
    tenant, identity, category, event_type, day, source,
    stored.weighted_events - summed.weighted_events,
    stored.positive_events - summed.positive_events,
    stored.negative_events - summed.negative_events,
    stored.counted_rows - summed.counted_rows,
    stored.written_at
FROM
(
    SELECT
        tenant, identity, category, event_type, toDate(timestamp, 'UTC') AS day, source,
        sumIf(toInt64(sign), capped = 0 AND weight > 0) AS weighted_events,
        sumIf(toInt64(sign), capped = 0 AND weight > 0 AND score_delta > 0) AS positive_events,
        sumIf(toInt64(sign), capped = 0 AND weight > 0 AND score_delta < 0) AS negative_events,
        toInt64(countIf(capped = 0)) AS counted_rows,
        maxIf(inserted_at, capped = 0) AS written_at
    FROM reputation_events
    GROUP BY tenant, identity, category, event_type, day, source
) AS stored
LEFT JOIN
(
    SELECT
        tenant, identity, category, event_type, day, source,
        sum(weighted_events) AS weighted_events,
        sum(positive_events) AS positive_events,
        sum(negative_events) AS negative_events,
        sum(counted_rows) AS counted_rows,
        max(written_at) AS written_at
    FROM reputation_daily_types
    GROUP BY tenant, identity, category, event_type, day, source
) AS summed USING (tenant, identity, category, event_type, day, source)
WHERE stored.weighted_events != summed.weighted_events OR stored.positive_events != summed.positive_events
   OR stored.negative_events != summed.negative_events OR stored.counted_rows != summed.counted_rows
   OR stored.written_at != summed.written_at;

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
    toInt64(countIf(capped = 1)) AS capped_rows,
    sumIf(toInt64(sign), capped = 0 AND weight > 0) AS weighted_events,
    sumIf(toInt64(sign), capped = 0 AND weight > 0 AND score_delta > 0) AS positive_events,
    sumIf(toInt64(sign), capped = 0 AND weight > 0 AND score_delta < 0) AS negative_events,
    toInt64(countIf(capped = 0)) AS counted_rows,
    maxIf(inserted_at, capped = 0) AS written_at
FROM reputation_events
GROUP BY tenant, identity, category, event_type, day, source;

-- The rows just added sit beside the ones they complete, so every read of the sums (the fleet's full refresh
-- above all) would read twice the rows until merges folded them, which for parts this large can take days
-- (merge_selector_base = 10): on the embedded engine each key is folded now, once (8 minutes of one core at
-- 100,000,000 events, bench/README.md). On a cluster `OPTIMIZE TABLE reputation_daily_types_local ON CLUSTER
-- <cluster> FINAL` does the same, shard by shard, when the hosts have the time (docs/cluster.md).
{{embedded_only}}OPTIMIZE TABLE reputation_daily_types FINAL;

-- Every identity recomputed at the next refresh of the fleet table (its formula now reads these sums).
INSERT INTO fleet_refresh_requests (requested_at) VALUES (now64(3));
