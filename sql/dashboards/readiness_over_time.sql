-- Quality runs per readiness verdict per time bucket.
SELECT
    toStartOfInterval(run_at, INTERVAL {bucket_seconds:UInt32} SECOND) AS time,
    readiness,
    count() AS runs
FROM finalized_runs(
    tenant = {tenant:String},
    since = {since:DateTime64(3, 'UTC')},
    until = {until:DateTime64(3, 'UTC')}
)
WHERE execution_status != 'execution_error'
  AND has({identities:Array(String)}, identity)
GROUP BY time, readiness
ORDER BY time, readiness
