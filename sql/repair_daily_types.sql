-- The daily sums (reputation_daily_types) that differ from the events stored, each added as its difference, so
-- that every sum becomes the events' again (service.store.reputation.repair_daily_sums: after a crash of the
-- embedded engine between an insert's part of reputation_events and its view's). The events' side is the view
-- reputation_daily_types_mv's SELECT (migrations/0027) over the whole table; a key repaired is written now
-- (written_at). Two years back only: the TTLs drop the events by month and their sums by year, so older sums
-- may rightly outlive their events.
INSERT INTO reputation_daily_types
    (tenant, identity, category, event_type, day, source, weighted_sum, weight_sum, events, capped_events,
     capped_rows, weighted_events, positive_events, negative_events, counted_rows, written_at)
SELECT
    tenant, identity, category, event_type, day, source,
    stored.weighted_sum - summed.weighted_sum,
    stored.weight_sum - summed.weight_sum,
    stored.events - summed.events,
    stored.capped_events - summed.capped_events,
    stored.capped_rows - summed.capped_rows,
    stored.weighted_events - summed.weighted_events,
    stored.positive_events - summed.positive_events,
    stored.negative_events - summed.negative_events,
    stored.counted_rows - summed.counted_rows,
    now64(3)
FROM
(
    SELECT
        tenant, identity, category, event_type, toDate(timestamp, 'UTC') AS day, source,
        sumIf(toDecimal128(score_delta * confidence * weight, 18) * sign, capped = 0) AS weighted_sum,
        sumIf(toDecimal128(confidence * weight, 18) * sign, capped = 0) AS weight_sum,
        sumIf(toInt64(sign), capped = 0) AS events,
        sumIf(toInt64(sign), capped = 1) AS capped_events,
        toInt64(countIf(capped = 1)) AS capped_rows,
        sumIf(toInt64(sign), capped = 0 AND weight > 0) AS weighted_events,
        sumIf(toInt64(sign), capped = 0 AND weight > 0 AND score_delta > 0) AS positive_events,
        sumIf(toInt64(sign), capped = 0 AND weight > 0 AND score_delta < 0) AS negative_events,
        toInt64(countIf(capped = 0)) AS counted_rows
    FROM reputation_events
    WHERE timestamp >= toStartOfDay(today() - 730)
    GROUP BY tenant, identity, category, event_type, day, source
) AS stored
FULL OUTER JOIN
(
    SELECT
        tenant, identity, category, event_type, day, source,
        sum(weighted_sum) AS weighted_sum,
        sum(weight_sum) AS weight_sum,
        sum(events) AS events,
        sum(capped_events) AS capped_events,
        sum(capped_rows) AS capped_rows,
        sum(weighted_events) AS weighted_events,
        sum(positive_events) AS positive_events,
        sum(negative_events) AS negative_events,
        sum(counted_rows) AS counted_rows
    FROM reputation_daily_types
    WHERE day >= today() - 730
    GROUP BY tenant, identity, category, event_type, day, source
) AS summed USING (tenant, identity, category, event_type, day, source)
WHERE stored.weighted_sum != summed.weighted_sum OR stored.weight_sum != summed.weight_sum
   OR stored.events != summed.events OR stored.capped_events != summed.capped_events
   OR stored.capped_rows != summed.capped_rows OR stored.weighted_events != summed.weighted_events
   OR stored.positive_events != summed.positive_events OR stored.negative_events != summed.negative_events
   OR stored.counted_rows != summed.counted_rows
