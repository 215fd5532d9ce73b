-- One identity's sums per category over the three windows of SPEC §7 at as_of: the 90 days ending at
-- as_of and 7 and 30 days earlier (offset_days 0, 7, 30). The API's hot path:
-- service.reputation.model.combine() turns its rows into scores with exactly the arithmetic of the
-- view reputation_at (migrations/0006), which serves the fleet, the alerts and Grafana. As there, the
-- exact daily sums of each source are weighed by the source's credibility and the window's decay, then
-- summed in Decimal again, so that the result does not depend on the order of parts; `evidence`
-- (confidence's N) is the window's Decimal sum over all categories. The daily counts are signed sums
-- (a retraction subtracts its event, migrations/0010): a failure type retracted to 0 is left out.
WITH
    ifNull((SELECT argMax(half_life_days, updated_at) FROM reputation_model), 0) AS half_life,
    (
        SELECT CAST((groupArray(source), groupArray(credibility)), 'Map(String, Float64)')
        FROM
        (
            SELECT source, argMax(credibility, updated_at) AS credibility
            FROM source_credibility
            WHERE tenant = {tenant:String}
            GROUP BY source
        )
    ) AS credibilities,
    {as_of:Date} - offset_days AS window_end,
    if(half_life = 0, 1., exp2(toInt32(day - window_end) / half_life)) AS decay
SELECT
    category,
    offset_days,
    toFloat64(sum(toDecimal128(weighted * credibility * decay, 18))) AS weighted,
    toFloat64(sum(toDecimal128(weight * credibility * decay, 18))) AS weight,
    toFloat64(sum(sum(toDecimal128(day_events * credibility * decay, 18))) OVER (PARTITION BY offset_days)) AS evidence,
    sumIf(day_events, credibility > 0) AS events,
    sumIf(day_positive, credibility > 0) AS positive_events,
    sumIf(day_negative, credibility > 0) AS negative_events,
    mapFilter((failure, count) -> count != 0, sumMapIf(day_failures, credibility > 0)) AS failures
FROM
(
    SELECT
        category,
        day,
        if(mapContains(credibilities, source), credibilities[source], 1.) AS credibility,
        toFloat64(sum(weighted_sum)) AS weighted,
        toFloat64(sum(weight_sum)) AS weight,
        sum(events) AS day_events,
        sum(positive_events) AS day_positive,
        sum(negative_events) AS day_negative,
        sumMap(failures) AS day_failures
    FROM reputation_daily_sources
    WHERE tenant = {tenant:String} AND identity = {identity:String}
      AND day BETWEEN {as_of:Date} - 119 AND {as_of:Date}
    GROUP BY category, day, source
)
ARRAY JOIN [0, 7, 30] AS offset_days
WHERE day BETWEEN window_end - 89 AND window_end
GROUP BY category, offset_days
