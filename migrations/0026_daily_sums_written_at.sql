-- One identity's reputation read from the fleet table when nothing it was computed from changed since
-- (issue #44, sql/identity_reputation_refreshed.sql): the formula's planning alone costs an identity's read
-- about 30 ms, a row of reputation_scores a few. Whether an identity's daily sums changed since the last
-- refresh must be seen from those sums, a few granules of 256 rows: reputation_events answers it by its
-- inserted_at index in every part of the table (25 ms at 10,000,000 events, 127 parts). So each daily sum
-- keeps when an event was last written to it: the latest inserted_at of its events, and the time a repair
-- wrote it (sql/repair_daily_sources.sql).
--
-- Sums stored before read the Unix epoch; the request below makes the next refresh recompute every
-- identity, and a read uses the fleet table only once a refresh started more than its margin after it.
ALTER TABLE reputation_daily_sources {{on_cluster}}
    ADD COLUMN IF NOT EXISTS written_at SimpleAggregateFunction(max, DateTime64(3, 'UTC'))
        DEFAULT toDateTime64(0, 3, 'UTC');

DROP VIEW IF EXISTS reputation_daily_sources_mv {{on_cluster}};

-- The daily sums' view of 0024, with written_at.
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
    sumMapIf(map(substring(event_type, 9), toInt64(sign)), startsWith(event_type, 'failure.')) AS failures,
    max(inserted_at) AS written_at
FROM reputation_events
WHERE capped = 0
GROUP BY tenant, identity, category, day, source;

INSERT INTO fleet_refresh_requests (requested_at) VALUES (now64(3));
