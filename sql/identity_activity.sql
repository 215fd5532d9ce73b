-- What the finalized runs of one identity say over [first, last]: runs, execution errors, unsafe verdicts
-- (quality runs judged unsafe_for_production), the last run's time, and the quality runs' primary failures
-- with their summed impacts (the top failure: service.reputation.activity); no row when it has no run
-- then. One identity's reputation reads its 90-day window when its fleet row is stale (the fleet table's
-- refresh sums the same per identity: sql/definitions/reputation_scores_mv.sql); the figures per day are
-- sql/identity_days.sql's.
-- From identity_run_days (migrations/0022), sorted by identity and day: a few granules. Each run counts as
-- its latest version (argMax by version).
SELECT
    count() AS runs,
    countIf(latest.2 = 'execution_error') AS execution_errors,
    countIf(latest.2 != 'execution_error' AND latest.3 = 'unsafe_for_production') AS unsafe_runs,
    max(latest.1) AS last_run_at,
    sumMapIf(map(latest.4, toUInt64(1)), latest.2 != 'execution_error' AND latest.4 != '') AS primary_failures,
    sumMapIf(map(latest.4, toInt64(latest.5)), latest.2 != 'execution_error' AND latest.4 != '') AS primary_impacts
FROM
(
    SELECT argMax((run_at, execution_status, readiness, primary_failure, primary_impact), version) AS latest
    FROM identity_run_days
    WHERE tenant = {tenant:String}
      AND identity = {identity:String}
      AND day BETWEEN {first:Date} AND {last:Date}
    GROUP BY run_id
)
HAVING runs > 0
