-- One identity's sums per category over the three windows of SPEC §7 at as_of: the 90 days ending at
-- as_of, and the same window 7 and 30 days earlier. A flat query, cheap to plan (the API's hot path):
-- service.reputation.model.combine() turns its rows into scores with exactly the arithmetic of the
-- view reputation_at, which serves the fleet, the alerts and Grafana.
SELECT
    category,
    toFloat64(sumIf(weighted_sum, day >= {as_of:Date} - 89)) AS weighted_now,
    toFloat64(sumIf(weight_sum, day >= {as_of:Date} - 89)) AS weight_now,
    toFloat64(sumIf(weighted_sum, day BETWEEN {as_of:Date} - 96 AND {as_of:Date} - 7)) AS weighted_7d,
    toFloat64(sumIf(weight_sum, day BETWEEN {as_of:Date} - 96 AND {as_of:Date} - 7)) AS weight_7d,
    toFloat64(sumIf(weighted_sum, day <= {as_of:Date} - 30)) AS weighted_30d,
    toFloat64(sumIf(weight_sum, day <= {as_of:Date} - 30)) AS weight_30d,
    sumIf(events, day >= {as_of:Date} - 89) AS events,
    sumIf(positive_events, day >= {as_of:Date} - 89) AS positive_events,
    sumIf(negative_events, day >= {as_of:Date} - 89) AS negative_events,
    sumMapIf(failures, day >= {as_of:Date} - 89) AS failures
FROM reputation_daily
WHERE tenant = {tenant:String} AND identity = {identity:String}
  AND day BETWEEN {as_of:Date} - 119 AND {as_of:Date}
GROUP BY category
