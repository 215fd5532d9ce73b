-- The finalized runs of one suite (latest version of each), oldest first so trials keep their order.
SELECT run_id, identity, created_at, run_at, task_id, trial, execution_status, score, failure_stage, failure_reason_code
FROM
(
    SELECT run_id, identity, created_at, task_id, trial, run_at, status, execution_status, score, failure_stage,
        failure_reason_code
    FROM runs
    WHERE tenant = {tenant:String} AND suite = {suite:String}
    ORDER BY run_id, version DESC
    LIMIT 1 BY run_id
)
WHERE status = 'finalized'
ORDER BY run_at, run_id
