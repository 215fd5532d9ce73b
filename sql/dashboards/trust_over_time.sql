-- Mean trust of each identity per time bucket. Execution errors are not quality evidence.
SELECT
    toStartOfInterval(run_at, INTERVAL {bucket_seconds:UInt32} SECOND) AS time,
    identity,
    avg(trust_score) AS trust
FROM finalized_runs(
    tenant = {tenant:String},
    since = {since:DateTime64(3, 'UTC')},
    until = {until:DateTime64(3, 'UTC')}
)
WHERE execution_status != 'execution_error'
  AND has({identities:Array(String)}, identity)
GROUP BY time, identity
ORDER BY time, identity
