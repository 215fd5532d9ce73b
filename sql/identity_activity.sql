-- What the finalized runs of the identities named say per UTC day over [first, last]: runs, execution
-- errors, unsafe verdicts (quality runs judged unsafe_for_production), the mean trust of the quality runs
-- (NULL on a day with none), the last run's time, and the quality runs' primary failures with their summed
-- impacts (the top failure: service.reputation.activity). One identity's reputation reads its 90-day
-- window, `/history` its days, the fleet its 30-day sparklines (the fleet's sums are computed per identity at
-- each refresh: migrations/0023).
-- From identity_run_days (migrations/0022), sorted by identity and day: a few granules per identity. Each run
-- counts as its latest version (argMax by version, one tuple so that a NULL trust is kept, not skipped).
SELECT
    identity,
    latest.1 AS day,
    count() AS runs,
    countIf(latest.3 = 'execution_error') AS execution_errors,
    countIf(latest.3 != 'execution_error' AND latest.4 = 'unsafe_for_production') AS unsafe_runs,
    if(runs = execution_errors, NULL, avgIf(latest.5, latest.3 != 'execution_error')) AS mean_trust,
    max(latest.2) AS last_run_at,
    sumMapIf(map(latest.6, toUInt64(1)), latest.3 != 'execution_error' AND latest.6 != '') AS primary_failures,
    sumMapIf(map(latest.6, toInt64(latest.7)), latest.3 != 'execution_error' AND latest.6 != '') AS primary_impacts
FROM
(
    SELECT
        identity,
        argMax((day, run_at, execution_status, readiness, trust_score, primary_failure, primary_impact), version)
            AS latest
    FROM identity_run_days
    WHERE tenant = {tenant:String}
      AND identity IN {identities:Array(String)}
      AND day BETWEEN {first:Date} AND {last:Date}
    GROUP BY identity, run_id
)
GROUP BY identity, day
ORDER BY identity, day
