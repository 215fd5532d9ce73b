-- What the finalized runs of the identities named say per UTC day over [first, last]: runs, execution
-- errors, unsafe verdicts (quality runs judged unsafe_for_production) and the mean trust of the quality runs
-- (NULL on a day with none). The fleet's 30-day sparklines and `/history` read it; what the runs of a whole
-- window say (the top failure, the last run) is sql/identity_activity.sql's.
-- From identity_run_days (migrations/0022), sorted by identity and day: a few granules per identity. Each run
-- counts as its latest version (argMax by version, one tuple so that a NULL trust is kept, not skipped).
SELECT
    identity,
    latest.1 AS day,
    count() AS runs,
    countIf(latest.2 = 'execution_error') AS execution_errors,
    countIf(latest.2 != 'execution_error' AND latest.3 = 'unsafe_for_production') AS unsafe_runs,
    if(runs = execution_errors, NULL, avgIf(latest.4, latest.2 != 'execution_error')) AS mean_trust
FROM
(
    SELECT identity, argMax((day, execution_status, readiness, trust_score), version) AS latest
    FROM identity_run_days
    WHERE tenant = {tenant:String}
      AND identity IN {identities:Array(String)}
      AND day BETWEEN {first:Date} AND {last:Date}
    GROUP BY identity, run_id
)
GROUP BY identity, day
ORDER BY identity, day
