-- The fleet's mean trust over the last 24 hours fell by at least min_drop points against the 7 days
-- before (at least min_runs recent runs). Execution errors are not quality evidence and are left out.
WITH {now:DateTime64(3, 'UTC')} - INTERVAL 1 DAY AS recent_start
SELECT
    'fleet_trust_drop' AS alert,
    'critical' AS severity,
    'fleet' AS subject,
    recent_trust AS value,
    previous_trust AS baseline,
    concat(
        'fleet mean trust ', toString(round(recent_trust, 1)), ' over the last 24 h (', toString(recent_runs),
        ' runs), down ', toString(round(previous_trust - recent_trust, 1)), ' points from ',
        toString(round(previous_trust, 1)), ' over the previous 7 days'
    ) AS message
FROM
(
    SELECT
        avgIf(trust_score, run_at > recent_start) AS recent_trust,
        avgIf(trust_score, run_at <= recent_start) AS previous_trust,
        countIf(run_at > recent_start) AS recent_runs,
        countIf(run_at <= recent_start) AS previous_runs
    FROM finalized_runs(
        tenant = {tenant:String},
        since = {now:DateTime64(3, 'UTC')} - INTERVAL 8 DAY,
        until = {now:DateTime64(3, 'UTC')}
    )
    WHERE execution_status != 'execution_error'
)
WHERE recent_runs >= {min_runs:UInt32}
  AND previous_runs > 0
  AND previous_trust - recent_trust >= {min_drop:Float64}
