-- Runs of one tenant, latest version of each, newest first, with optional filters ('' / NULL = any)
-- and keyset pagination on (run_at, run_id). FINAL keeps the latest version of each run (the table is a
-- ReplacingMergeTree by version), at far less cost than sorting every version of the tenant's runs by run
-- id to take the first of each (`python -m bench store` measures both pages: bench/README.md).
-- identity, suite and parent_run_id never change, so they filter before the de-duplication of versions (PREWHERE);
-- the rest change between versions and filter after it, which the setting below keeps so. An execution
-- error has no quality verdict, so the readiness and primary-failure filters never match one.
SELECT
    run_id, identity, kind, suite, task_id, trial, run_at, created_at, finalized_at, status,
    execution_status, failure_stage, failure_reason_code, score, trust_score, readiness,
    primary_failure, session_composite, event_count, tool_calls, errors, total_tokens, parent_run_id
FROM runs FINAL
PREWHERE ({identity:String} = '' OR identity = {identity:String})
     AND ({suite:String} = '' OR suite = {suite:String})
     AND ({parent:String} = '' OR parent_run_id = {parent:String})
WHERE tenant = {tenant:String}
  AND ({readiness:String} = '' OR (readiness = {readiness:String} AND execution_status != 'execution_error'))
  AND ({execution_status:String} = '' OR execution_status = {execution_status:String})
  AND ({primary_failure:String} = ''
       OR (primary_failure = {primary_failure:String} AND execution_status != 'execution_error'))
  AND ({status:String} = '' OR status = {status:String})
  AND ({since:Nullable(DateTime64(3, 'UTC'))} IS NULL OR run_at >= {since:Nullable(DateTime64(3, 'UTC'))})
  AND ({until:Nullable(DateTime64(3, 'UTC'))} IS NULL OR run_at < {until:Nullable(DateTime64(3, 'UTC'))})
  AND ({after_at:Nullable(DateTime64(3, 'UTC'))} IS NULL
       OR (run_at, run_id) < ({after_at:Nullable(DateTime64(3, 'UTC'))}, {after_id:String}))
ORDER BY run_at DESC, run_id DESC
LIMIT {limit:UInt32}
SETTINGS optimize_move_to_prewhere_if_final = 0
