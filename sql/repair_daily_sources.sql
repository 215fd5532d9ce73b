-- The daily reputation sums that differ from the events stored, each added as its difference, so that every
-- sum becomes the events' again (service.store.reputation.repair_daily_sums: after a crash of the embedded
-- engine between an insert's part of reputation_events and its view's). The events' side is the view
-- reputation_daily_sources_mv's SELECT (migrations/0010) over the whole table; a sum repaired is written now
-- (written_at, migrations/0026). Two years back only: the TTLs drop the events by month and their sums by
-- year, so older sums may rightly outlive their events.
INSERT INTO reputation_daily_sources
    (tenant, identity, category, day, source, weighted_sum, weight_sum, events, positive_events, negative_events,
     failures, written_at)
SELECT
    tenant, identity, category, day, source,
    stored.weighted_sum - summed.weighted_sum,
    stored.weight_sum - summed.weight_sum,
    stored.events - summed.events,
    stored.positive_events - summed.positive_events,
    stored.negative_events - summed.negative_events,
    mapFilter((type, count) -> count != 0, mapSubtract(stored.failures, summed.failures)),
    now64(3)
FROM
(
    SELECT
        tenant, identity, category, toDate(timestamp, 'UTC') AS day, source,
        sum(toDecimal128(score_delta * confidence * weight, 18) * sign) AS weighted_sum,
        sum(toDecimal128(confidence * weight, 18) * sign) AS weight_sum,
        sumIf(toInt64(sign), weight > 0) AS events,
        sumIf(toInt64(sign), weight > 0 AND score_delta > 0) AS positive_events,
        sumIf(toInt64(sign), weight > 0 AND score_delta < 0) AS negative_events,
        mapFilter((type, count) -> count != 0,
            sumMapIf(map(substring(event_type, 9), toInt64(sign)), startsWith(event_type, 'failure.'))) AS failures
    FROM reputation_events
    WHERE capped = 0 AND timestamp >= toStartOfDay(today() - 730)
    GROUP BY tenant, identity, category, day, source
) AS stored
FULL OUTER JOIN
(
    SELECT
        tenant, identity, category, day, source,
        sum(weighted_sum) AS weighted_sum,
        sum(weight_sum) AS weight_sum,
        sum(events) AS events,
        sum(positive_events) AS positive_events,
        sum(negative_events) AS negative_events,
        mapFilter((type, count) -> count != 0, sumMap(failures)) AS failures
    FROM reputation_daily_sources
    WHERE day >= today() - 730
    GROUP BY tenant, identity, category, day, source
) AS summed USING (tenant, identity, category, day, source)
WHERE stored.weighted_sum != summed.weighted_sum OR stored.weight_sum != summed.weight_sum
   OR stored.events != summed.events OR stored.positive_events != summed.positive_events
   OR stored.negative_events != summed.negative_events OR stored.failures != summed.failures
