-- The causes of some of a tenant's finalized runs, in cause order (run_failures, one row per cause; an
-- execution error has none): what the finalize emitted its failure.<type> events from.
SELECT run_id, failure_type, severity, impact_score
FROM run_failures
WHERE tenant = {tenant:String} AND run_id IN {run_ids:Array(String)}
ORDER BY run_id, position
LIMIT 1 BY run_id, position
