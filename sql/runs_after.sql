-- A page of one tenant's runs in run id order, after the run id given ('' for the first page): the
-- latest version of each, every status, with what reputation emission needs of it (the rebuild walks a
-- tenant's runs this way, service/services/rebuild.py).
SELECT
    tenant,
    run_id,
    identity,
    created_at,
    kind,
    status,
    run_at,
    execution_status,
    failure_stage,
    failure_reason_code,
    trust_score,
    readiness,
    session_composite,
    event_count
FROM runs
WHERE tenant = {tenant:String} AND run_id > {after:String}
ORDER BY run_id, version DESC
LIMIT 1 BY run_id
LIMIT {limit:UInt32}
