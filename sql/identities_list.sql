-- The fleet: every identity's reputation and what its finalized runs of the same window say (runs, execution
-- errors and their share, unsafe verdicts: quality runs judged unsafe_for_production, the last run's time,
-- and the quality runs' primary failures with their summed impacts), as the refreshable view
-- reputation_scores_mv last computed them into reputation_scores (migrations/0023: the identities that
-- changed since its last refresh, every identity once a day); filtered (`q`: identities holding it, in any
-- case) and sorted by a column chosen by a
-- bound parameter. One table read, whatever the sort: the runs' figures no longer join the runs.
WITH if({descending:Bool}, -1, 1) AS direction
SELECT
    identity, as_of, computed_at, overall, task_quality, economic, identity_hygiene, confidence, events,
    positive_events, negative_events, failures, score_7d_ago, score_30d_ago, trend_7d, trend_30d, runs,
    execution_errors, if(runs = 0, NULL, execution_errors / runs) AS execution_error_share, unsafe_runs,
    if(runs = 0, NULL, last_run_at) AS last_run_at, primary_failures, primary_impacts
FROM reputation_scores FINAL
WHERE tenant = {tenant:String}
  AND confidence >= {min_confidence:Float64}
  AND startsWith(identity, {prefix:String})
  AND ({q:String} = '' OR positionCaseInsensitiveUTF8(identity, {q:String}) > 0)
ORDER BY
    if({sort:String} = 'identity', identity, '') ASC,
    multiIf(
        {sort:String} = 'overall', overall,
        {sort:String} = 'confidence', confidence,
        {sort:String} = 'trend_7d', trend_7d,
        {sort:String} = 'trend_30d', trend_30d,
        {sort:String} = 'events', toFloat64(events),
        {sort:String} = 'runs', toFloat64(runs),
        {sort:String} = 'execution_errors', toFloat64(execution_errors),
        {sort:String} = 'execution_error_share', execution_error_share,
        {sort:String} = 'unsafe_runs', toFloat64(unsafe_runs),
        {sort:String} = 'last_run_at', toFloat64(last_run_at),
        NULL
    ) * direction ASC NULLS LAST,
    identity ASC
LIMIT {limit:UInt32} OFFSET {offset:UInt32}
