-- At least min_share of the quality runs of the last 24 hours (and at least min_runs of them) were
-- judged unsafe_for_production. The baseline is the share over the 7 days before (null without runs).
WITH {now:DateTime64(3, 'UTC')} - INTERVAL 1 DAY AS recent_start
SELECT
    'unsafe_share' AS alert,
    'critical' AS severity,
    'fleet' AS subject,
    recent_unsafe / recent_runs AS value,
    if(previous_runs = 0, NULL, previous_unsafe / previous_runs) AS baseline,
    concat(
        toString(recent_unsafe), ' of ', toString(recent_runs), ' runs over the last 24 h (',
        toString(round(100 * value, 1)), '%) were unsafe for production'
    ) AS message
FROM
(
    SELECT
        countIf(run_at > recent_start AND readiness = 'unsafe_for_production') AS recent_unsafe,
        countIf(run_at > recent_start) AS recent_runs,
        countIf(run_at <= recent_start AND readiness = 'unsafe_for_production') AS previous_unsafe,
        countIf(run_at <= recent_start) AS previous_runs
    FROM finalized_runs(
        tenant = {tenant:String},
        since = {now:DateTime64(3, 'UTC')} - INTERVAL 8 DAY,
        until = {now:DateTime64(3, 'UTC')}
    )
    WHERE execution_status != 'execution_error'
)
WHERE recent_runs >= {min_runs:UInt32}
  AND recent_unsafe / recent_runs >= {min_share:Float64}
