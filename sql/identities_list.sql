-- The fleet: every identity's current reputation from reputation_scores (rewritten by the
-- refreshable view), beside what its finalized runs of the same window (the model's window_days) ending at
-- `now` say: runs, execution errors and their share, unsafe verdicts (quality runs judged
-- unsafe_for_production), the last run's time and the quality runs' primary failures with their summed
-- impacts (the top failure: service.reputation.activity) (sql/identity_activity.sql gives the same per day, and
-- says why each run counts as its latest version among those of the window); filtered and sorted. The sort
-- column is chosen by a bound parameter.
-- Sorted by a reputation figure, the page is known from the scores alone, and only its identities' runs are
-- read (the projection identity_newest_first, migrations/0019); sorted by a figure of the runs, every run of
-- the window is (the projection newest_first).
WITH
    {sort:String} IN ('runs', 'execution_errors', 'execution_error_share', 'unsafe_runs', 'last_run_at') AS by_runs,
    if({descending:Bool}, -1, 1) AS direction,
    scores AS
    (
        SELECT
            identity, as_of, computed_at, overall, task_quality, economic, identity_hygiene, confidence, events,
            positive_events, negative_events, failures, score_7d_ago, score_30d_ago, trend_7d, trend_30d,
            if({sort:String} = 'identity', identity, '') AS name_key,
            multiIf(
                {sort:String} = 'overall', overall,
                {sort:String} = 'confidence', confidence,
                {sort:String} = 'trend_7d', trend_7d,
                {sort:String} = 'trend_30d', trend_30d,
                {sort:String} = 'events', toFloat64(events),
                NULL
            ) * direction AS reputation_key
        FROM reputation_scores FINAL
        WHERE tenant = {tenant:String}
          AND confidence >= {min_confidence:Float64}
          AND startsWith(identity, {prefix:String})
    ),
    page AS
    (
        SELECT identity
        FROM scores
        WHERE NOT by_runs
        ORDER BY name_key ASC, reputation_key ASC NULLS LAST, identity ASC
        LIMIT {limit:UInt32} + {offset:UInt32}
    )
SELECT
    scores.identity AS identity, as_of, computed_at, overall, task_quality, economic, identity_hygiene, confidence,
    events, positive_events, negative_events, failures, score_7d_ago, score_30d_ago, trend_7d, trend_30d,
    activity.runs AS runs,
    activity.execution_errors AS execution_errors,
    if(activity.runs = 0, NULL, activity.execution_errors / activity.runs) AS execution_error_share,
    activity.unsafe_runs AS unsafe_runs,
    if(activity.runs = 0, NULL, activity.last_run_at) AS last_run_at,
    activity.primary_failures AS primary_failures,
    activity.primary_impacts AS primary_impacts
FROM scores
LEFT JOIN
(
    SELECT
        identity,
        count() AS runs,
        countIf(execution_status = 'execution_error') AS execution_errors,
        countIf(execution_status != 'execution_error' AND readiness = 'unsafe_for_production') AS unsafe_runs,
        max(run_at) AS last_run_at,
        sumMapIf(map(primary_failure, toUInt64(1)), execution_status != 'execution_error' AND primary_failure != '')
            AS primary_failures,
        sumMapIf(
            map(primary_failure, toInt64(primary_impact)), execution_status != 'execution_error' AND primary_failure != ''
        ) AS primary_impacts
    FROM
    (
        SELECT
            identity,
            argMax(status, version) AS latest_status,
            argMax(runs.run_at, version) AS run_at,
            argMax(runs.execution_status, version) AS execution_status,
            argMax(runs.readiness, version) AS readiness,
            argMax(runs.primary_failure, version) AS primary_failure,
            argMax(runs.primary_impact, version) AS primary_impact
        FROM runs
        WHERE tenant = {tenant:String}
          AND (by_runs OR identity IN page)
          AND toDate(runs.run_at, 'UTC') BETWEEN toDate({now:DateTime64(3, 'UTC')}, 'UTC') - ({window_days:UInt16} - 1)
              AND toDate({now:DateTime64(3, 'UTC')}, 'UTC')
        GROUP BY identity, run_id
    )
    WHERE latest_status = 'finalized'
    GROUP BY identity
) AS activity ON activity.identity = scores.identity
ORDER BY
    name_key ASC,
    if(
        by_runs,
        multiIf(
            {sort:String} = 'runs', toFloat64(runs),
            {sort:String} = 'execution_errors', toFloat64(execution_errors),
            {sort:String} = 'execution_error_share', execution_error_share,
            {sort:String} = 'unsafe_runs', toFloat64(unsafe_runs),
            toFloat64(last_run_at)
        ) * direction,
        reputation_key
    ) ASC NULLS LAST,
    identity ASC
LIMIT {limit:UInt32} OFFSET {offset:UInt32}
