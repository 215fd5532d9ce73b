-- One identity's exact daily sums per category, day and source over the 120 days that the three windows
-- of SPEC §7 at as_of span (the 90 days ending at as_of, 7 and 30 days earlier). The API's hot path:
-- service.reputation.model.windows weighs them by credibility and decay and sums them per window with
-- the arithmetic of the view reputation_at (migrations/0006, 0010, 0018), which serves the fleet, the alerts
-- and Grafana. The counts are signed sums (a retraction subtracts its event, migrations/0010).
-- No PREWHERE: the table's parts are Compact (migrations/0012), so the granules of the identity are read
-- with all their columns anyway, and filtering in two steps only adds work (0.4 ms of 8.4, p50 of 600
-- alternating reads on the store benchmark's 10,000,000 events).
SELECT
    category,
    day,
    source,
    toFloat64(sum(weighted_sum)) AS weighted,
    toFloat64(sum(weight_sum)) AS weight,
    sum(events) AS events,
    sum(positive_events) AS positive_events,
    sum(negative_events) AS negative_events,
    sumMap(failures) AS failures
FROM reputation_daily_sources
WHERE tenant = {tenant:String} AND identity = {identity:String}
  AND day BETWEEN {as_of:Date} - 119 AND {as_of:Date}
GROUP BY category, day, source
SETTINGS optimize_move_to_prewhere = 0
