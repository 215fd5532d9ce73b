-- The latest 1000 finalized runs in the time range, newest first.
SELECT
    run_at, run_id, identity, suite, task_id, execution_status, trust_score, readiness, primary_failure,
    failure_stage, failure_reason_code, tool_calls, errors, total_tokens
FROM finalized_runs(
    tenant = {tenant:String},
    since = {since:DateTime64(3, 'UTC')},
    until = {until:DateTime64(3, 'UTC')}
)
WHERE has({identities:Array(String)}, identity)
ORDER BY run_at DESC, run_id
LIMIT 1000
