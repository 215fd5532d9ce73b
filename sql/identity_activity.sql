-- What the finalized runs of the identities named say per UTC day over [first, last]: runs, execution
-- errors, unsafe verdicts (quality runs judged unsafe_for_production), the mean trust of the quality runs
-- (NULL on a day with none), the last run's time, and per failure type the quality runs it was the primary
-- failure of and their primary causes' summed impact (the top failure: service.reputation.activity). One identity's reputation reads its 90-day window
-- (the sums of sql/identities_list.sql for the fleet), the fleet its 30-day sparklines.
-- Each run counts as its latest version among those of the days asked (argMax by version): the filters on
-- identity and run time let the engine read the projection identity_newest_first (migrations/0019), a few
-- granules, where FINAL over the table sorted by run id scanned all the tenant's runs. The same runs count
-- as with FINAL: a run's open version may lie in other days than its finalized one, but its finalized
-- versions share one time (a re-diagnosis keeps it), so a finalized version found here is the run's latest.
SELECT
    identity,
    toDate(run_at, 'UTC') AS day,
    count() AS runs,
    countIf(execution_status = 'execution_error') AS execution_errors,
    countIf(execution_status != 'execution_error' AND readiness = 'unsafe_for_production') AS unsafe_runs,
    if(runs = execution_errors, NULL, avgIf(trust_score, execution_status != 'execution_error')) AS mean_trust,
    max(run_at) AS last_run_at,
    sumMapIf(map(primary_failure, toUInt64(1)), execution_status != 'execution_error' AND primary_failure != '')
        AS primary_failures,
    sumMapIf(
        map(primary_failure, toInt64(primary_impact)), execution_status != 'execution_error' AND primary_failure != ''
    ) AS primary_impacts
FROM
(
    SELECT
        identity,
        argMax(status, version) AS latest_status,
        argMax(runs.run_at, version) AS run_at,
        argMax(runs.execution_status, version) AS execution_status,
        argMax(runs.readiness, version) AS readiness,
        argMax(runs.trust_score, version) AS trust_score,
        argMax(runs.primary_failure, version) AS primary_failure,
        argMax(runs.primary_impact, version) AS primary_impact
    FROM runs
    WHERE tenant = {tenant:String}
      AND identity IN {identities:Array(String)}
      AND toDate(runs.run_at, 'UTC') BETWEEN {first:Date} AND {last:Date}
    GROUP BY identity, run_id
)
WHERE latest_status = 'finalized'
GROUP BY identity, day
ORDER BY identity, day
