-- The explanation's daily sums (reputation_daily_types) that differ from the events stored, each added as its
-- difference, as sql/repair_daily_sources.sql does for the reputation's (service.store.reputation
-- .repair_daily_sums). The events' side is the view reputation_daily_types_mv's SELECT (migrations/0024) over
-- the whole table; two years back only, for the same reason.
INSERT INTO reputation_daily_types
    (tenant, identity, category, event_type, day, source, weighted_sum, weight_sum, events, capped_events,
     capped_rows)
SELECT
    tenant, identity, category, event_type, day, source,
    stored.weighted_sum - summed.weighted_sum,
    stored.weight_sum - summed.weight_sum,
    stored.events - summed.events,
    stored.capped_events - summed.capped_events,
    stored.capped_rows - summed.capped_rows
FROM
(
    SELECT
        tenant, identity, category, event_type, toDate(timestamp, 'UTC') AS day, source,
        sumIf(toDecimal128(score_delta * confidence * weight, 18) * sign, capped = 0) AS weighted_sum,
        sumIf(toDecimal128(confidence * weight, 18) * sign, capped = 0) AS weight_sum,
        sumIf(toInt64(sign), capped = 0) AS events,
        sumIf(toInt64(sign), capped = 1) AS capped_events,
        toInt64(countIf(capped = 1)) AS capped_rows
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
        sum(capped_rows) AS capped_rows
    FROM reputation_daily_types
    WHERE day >= today() - 730
    GROUP BY tenant, identity, category, event_type, day, source
) AS summed USING (tenant, identity, category, event_type, day, source)
WHERE stored.weighted_sum != summed.weighted_sum OR stored.weight_sum != summed.weight_sum
   OR stored.events != summed.events OR stored.capped_events != summed.capped_events
   OR stored.capped_rows != summed.capped_rows
