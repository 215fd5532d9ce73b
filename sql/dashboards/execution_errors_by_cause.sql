-- Execution errors over the time range by stage and reason: runs, identities hit, share of all runs, and
-- when they were first and last seen.
SELECT
    failure_stage AS stage,
    failure_reason_code AS reason,
    count() AS runs,
    uniqExact(identity) AS identities,
    runs / any(all_runs) AS share_of_runs,
    min(run_at) AS first_seen,
    max(run_at) AS last_seen
FROM
(
    SELECT identity, run_at, execution_status, failure_stage, failure_reason_code, count() OVER () AS all_runs
    FROM finalized_runs(
        tenant = {tenant:String},
        since = {since:DateTime64(3, 'UTC')},
        until = {until:DateTime64(3, 'UTC')}
    )
    WHERE has({identities:Array(String)}, identity)
)
WHERE execution_status = 'execution_error'
GROUP BY stage, reason
ORDER BY runs DESC, stage, reason
