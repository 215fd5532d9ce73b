-- The fleet's mean trust per time bucket. Execution errors are not quality evidence.
SELECT
    toStartOfInterval(run_at, INTERVAL {bucket_seconds:UInt32} SECOND) AS time,
    avg(trust_score) AS mean_trust
FROM finalized_runs(
    tenant = {tenant:String},
    since = {since:DateTime64(3, 'UTC')},
    until = {until:DateTime64(3, 'UTC')}
)
WHERE execution_status != 'execution_error'
GROUP BY time
ORDER BY time
