-- Per identity over the time range: quality runs, mean trust, unsafe verdicts and the six dimension scores.
SELECT
    identity,
    count() AS runs,
    avg(trust_score) AS trust,
    countIf(readiness = 'unsafe_for_production') AS unsafe_runs,
    avg(loop_control) AS loop_control,
    avg(memory_integrity) AS memory_integrity,
    avg(tool_output_utilization) AS tool_output_utilization,
    avg(context_health) AS context_health,
    avg(cost_efficiency) AS cost_efficiency,
    avg(skill_adherence) AS skill_adherence
FROM finalized_runs(
    tenant = {tenant:String},
    since = {since:DateTime64(3, 'UTC')},
    until = {until:DateTime64(3, 'UTC')}
)
WHERE execution_status != 'execution_error'
  AND has({identities:Array(String)}, identity)
GROUP BY identity
ORDER BY trust, identity
