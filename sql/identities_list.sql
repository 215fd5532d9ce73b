-- The fleet: every identity's current reputation from reputation_scores (rewritten by the
-- refreshable view), beside what its finalized runs of the same window (the model's window_days) ending at
-- `now` say: runs, execution errors and their share, unsafe verdicts (quality runs judged
-- unsafe_for_production) and the last run's time (sql/identity_activity.sql gives the same per day);
-- filtered and sorted. The sort column is chosen by a bound parameter. FINAL keeps each run's latest
-- version (see sql/runs_list.sql).
SELECT
    scores.identity AS identity, as_of, computed_at, overall, task_quality, economic, identity_hygiene, confidence,
    events, positive_events, negative_events, failures, score_7d_ago, score_30d_ago, trend_7d, trend_30d,
    activity.runs AS runs,
    activity.execution_errors AS execution_errors,
    if(activity.runs = 0, NULL, activity.execution_errors / activity.runs) AS execution_error_share,
    activity.unsafe_runs AS unsafe_runs,
    if(activity.runs = 0, NULL, activity.last_run_at) AS last_run_at
FROM reputation_scores AS scores FINAL
LEFT JOIN
(
    SELECT
        identity,
        count() AS runs,
        countIf(execution_status = 'execution_error') AS execution_errors,
        countIf(execution_status != 'execution_error' AND readiness = 'unsafe_for_production') AS unsafe_runs,
        max(run_at) AS last_run_at
    FROM runs FINAL
    WHERE tenant = {tenant:String}
      AND status = 'finalized'
      AND toDate(run_at, 'UTC') BETWEEN toDate({now:DateTime64(3, 'UTC')}, 'UTC') - ({window_days:UInt16} - 1)
          AND toDate({now:DateTime64(3, 'UTC')}, 'UTC')
    GROUP BY identity
) AS activity ON activity.identity = scores.identity
WHERE scores.tenant = {tenant:String}
  AND confidence >= {min_confidence:Float64}
  AND startsWith(scores.identity, {prefix:String})
ORDER BY
    if({sort:String} = 'identity', scores.identity, '') ASC,
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
    ) * if({descending:Bool}, -1, 1) ASC NULLS LAST,
    scores.identity ASC
LIMIT {limit:UInt32} OFFSET {offset:UInt32}
SETTINGS optimize_move_to_prewhere_if_final = 0
