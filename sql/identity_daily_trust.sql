-- Runs per UTC day and their mean trust for one identity; execution errors are not quality evidence.
SELECT toDate(run_at, 'UTC') AS day, count() AS runs, avg(trust_score) AS mean_trust
FROM
(
    SELECT run_at, trust_score, status, execution_status
    FROM runs
    WHERE tenant = {tenant:String} AND identity = {identity:String}
    ORDER BY run_id, version DESC
    LIMIT 1 BY run_id
)
WHERE status = 'finalized' AND execution_status != 'execution_error'
  AND toDate(run_at, 'UTC') BETWEEN {first:Date} AND {last:Date}
GROUP BY day
ORDER BY day
