-- Each failure type over the time range: runs and identities showing it, by severity, how often it was the
-- primary diagnosis, and its mean impact.
SELECT
    failure_type,
    uniqExact(run_id) AS runs,
    uniqExact(identity) AS identities,
    uniqExactIf(run_id, severity = 'critical') AS critical,
    uniqExactIf(run_id, severity = 'high') AS high,
    uniqExactIf(run_id, severity = 'medium') AS medium,
    uniqExactIf(run_id, is_primary) AS primary,
    avg(impact_score) AS mean_impact
FROM
(
    SELECT run_id, identity, failure_type, severity, impact_score, is_primary
    FROM run_failures
    WHERE tenant = {tenant:String}
      AND run_at >= {since:DateTime64(3, 'UTC')}
      AND run_at <= {until:DateTime64(3, 'UTC')}
      AND has({identities:Array(String)}, identity)
    ORDER BY run_id, position
    LIMIT 1 BY run_id, position
)
GROUP BY failure_type
ORDER BY runs DESC, failure_type
