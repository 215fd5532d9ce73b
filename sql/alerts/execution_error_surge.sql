-- Infrastructure, not agents: execution errors of one stage and reason over the last 24 hours make up at
-- least ratio times the share of runs they made up over the 7 days before, in at least min_runs recent
-- runs. Without runs in the 7 days before the baseline share is 0, so a burst on a new tenant alerts too.
WITH {now:DateTime64(3, 'UTC')} - INTERVAL 1 DAY AS recent_start
SELECT
    'execution_error_surge' AS alert,
    'critical' AS severity,
    if(failure_reason_code = '', failure_stage, concat(failure_stage, '/', failure_reason_code)) AS subject,
    recent_errors / recent_runs AS value,
    previous_errors / greatest(previous_runs, 1) AS baseline,
    concat(
        'infrastructure: ', toString(recent_errors), ' of ', toString(recent_runs), ' runs over the last 24 h failed at ',
        subject, ' (', toString(round(100 * value, 1)), '%), against ', toString(round(100 * baseline, 1)),
        '% over the previous 7 days'
    ) AS message
FROM
(
    SELECT
        failure_stage,
        failure_reason_code,
        countIf(run_at > recent_start) AS recent_errors,
        countIf(run_at <= recent_start) AS previous_errors
    FROM finalized_runs(
        tenant = {tenant:String},
        since = {now:DateTime64(3, 'UTC')} - INTERVAL 8 DAY,
        until = {now:DateTime64(3, 'UTC')}
    )
    WHERE execution_status = 'execution_error'
    GROUP BY failure_stage, failure_reason_code
) AS errors
CROSS JOIN
(
    SELECT countIf(run_at > recent_start) AS recent_runs, countIf(run_at <= recent_start) AS previous_runs
    FROM finalized_runs(
        tenant = {tenant:String},
        since = {now:DateTime64(3, 'UTC')} - INTERVAL 8 DAY,
        until = {now:DateTime64(3, 'UTC')}
    )
) AS totals
WHERE recent_errors >= {min_runs:UInt32}
  AND recent_errors / recent_runs >= {ratio:Float64} * baseline
ORDER BY subject
