-- Execution errors (infrastructure, not agents) per stage/reason per time bucket.
SELECT
    toStartOfInterval(run_at, INTERVAL {bucket_seconds:UInt32} SECOND) AS time,
    if(failure_reason_code = '', failure_stage, concat(failure_stage, '/', failure_reason_code)) AS cause,
    count() AS runs
FROM finalized_runs(
    tenant = {tenant:String},
    since = {since:DateTime64(3, 'UTC')},
    until = {until:DateTime64(3, 'UTC')}
)
WHERE execution_status = 'execution_error'
  AND has({identities:Array(String)}, identity)
GROUP BY time, cause
ORDER BY time, cause
