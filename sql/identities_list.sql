-- The fleet: every identity's current reputation from reputation_scores (rewritten by the
-- refreshable view), filtered and sorted. The sort column is chosen by a bound parameter.
SELECT
    identity, as_of, computed_at, overall, task_quality, economic, identity_hygiene, confidence,
    events, positive_events, negative_events, failures, score_7d_ago, score_30d_ago, trend_7d, trend_30d
FROM reputation_scores FINAL
WHERE tenant = {tenant:String}
  AND confidence >= {min_confidence:Float64}
  AND startsWith(identity, {prefix:String})
ORDER BY
    if({sort:String} = 'identity', identity, '') ASC,
    multiIf(
        {sort:String} = 'overall', overall,
        {sort:String} = 'confidence', confidence,
        {sort:String} = 'trend_7d', trend_7d,
        {sort:String} = 'trend_30d', trend_30d,
        {sort:String} = 'events', toFloat64(events),
        NULL
    ) * if({descending:Bool}, -1, 1) ASC NULLS LAST,
    identity ASC
LIMIT {limit:UInt32} OFFSET {offset:UInt32}
