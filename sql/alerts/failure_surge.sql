-- A failure type's fleet rate (share of quality runs showing it) over the last 24 hours is at least
-- ratio times its rate over the 7 days before, in at least min_runs recent runs. A type never seen
-- before surges from a rate of 0; a tenant without 7 days of history has no baseline and no alert.
WITH
    {now:DateTime64(3, 'UTC')} - INTERVAL 1 DAY AS recent_start,
    quality_runs AS
    (
        SELECT run_id, run_at
        FROM finalized_runs(
            tenant = {tenant:String},
            since = {now:DateTime64(3, 'UTC')} - INTERVAL 8 DAY,
            until = {now:DateTime64(3, 'UTC')}
        )
        WHERE execution_status != 'execution_error'
    )
SELECT
    'failure_surge' AS alert,
    'warning' AS severity,
    failure_type AS subject,
    recent_failed / recent_runs AS value,
    previous_failed / previous_runs AS baseline,
    concat(
        failure_type, ' in ', toString(recent_failed), ' of ', toString(recent_runs), ' runs over the last 24 h (',
        toString(round(100 * value, 1)), '%), against ', toString(round(100 * baseline, 1)), '% over the previous 7 days'
    ) AS message
FROM
(
    SELECT
        failure_type,
        uniqExactIf(run_id, run_at > recent_start) AS recent_failed,
        uniqExactIf(run_id, run_at <= recent_start) AS previous_failed
    FROM run_failures
    WHERE tenant = {tenant:String}
      AND run_at >= {now:DateTime64(3, 'UTC')} - INTERVAL 8 DAY
      AND run_at <= {now:DateTime64(3, 'UTC')}
      AND run_id IN (SELECT run_id FROM quality_runs)
    GROUP BY failure_type
) AS failed
CROSS JOIN
(
    SELECT countIf(run_at > recent_start) AS recent_runs, countIf(run_at <= recent_start) AS previous_runs
    FROM quality_runs
) AS totals
WHERE recent_failed >= {min_runs:UInt32}
  AND previous_runs > 0
  AND recent_failed / recent_runs >= {ratio:Float64} * previous_failed / previous_runs
ORDER BY subject
