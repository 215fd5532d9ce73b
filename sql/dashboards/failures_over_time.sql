-- Runs showing each failure type per time bucket (a run counts once per type).
SELECT
    toStartOfInterval(run_at, INTERVAL {bucket_seconds:UInt32} SECOND) AS time,
    failure_type,
    uniqExact(run_id) AS runs
FROM run_failures
WHERE tenant = {tenant:String}
  AND run_at >= {since:DateTime64(3, 'UTC')}
  AND run_at <= {until:DateTime64(3, 'UTC')}
  AND has({identities:Array(String)}, identity)
GROUP BY time, failure_type
ORDER BY time, failure_type
