-- What the finalized runs of the identities named say per UTC day over [first, last]: runs, execution
-- errors, unsafe verdicts (quality runs judged unsafe_for_production), the mean trust of the quality runs
-- (NULL on a day with none) and the last run's time. One identity's reputation reads its 90-day window
-- (the sums of sql/identities_list.sql for the fleet), the fleet its 30-day sparklines. FINAL keeps each
-- run's latest version (see sql/runs_list.sql).
SELECT
    identity,
    toDate(run_at, 'UTC') AS day,
    count() AS runs,
    countIf(execution_status = 'execution_error') AS execution_errors,
    countIf(execution_status != 'execution_error' AND readiness = 'unsafe_for_production') AS unsafe_runs,
    if(runs = execution_errors, NULL, avgIf(trust_score, execution_status != 'execution_error')) AS mean_trust,
    max(run_at) AS last_run_at
FROM runs FINAL
PREWHERE has({identities:Array(String)}, identity)
WHERE tenant = {tenant:String}
  AND status = 'finalized'
  AND toDate(run_at, 'UTC') BETWEEN {first:Date} AND {last:Date}
GROUP BY identity, day
ORDER BY identity, day
SETTINGS optimize_move_to_prewhere_if_final = 0
