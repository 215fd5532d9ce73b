-- The fleet table's refresh (reputation_scores: the fleet list, the alerts, Grafana), incremental (migrations
-- 0023): each identity's reputation today (the view reputation_at) and its finalized runs of the same window
-- (identity_run_days, each run's latest version), for the identities written to since the last refresh,
-- and every other identity's row kept as it was. Every row gets this refresh's time, so the latest computed_at
-- is when the last refresh started, which the next one starts from.
--
-- Written to since: reputation events inserted (inserted_at, indexed since 0014) or runs' rows written
-- (written_at) from a margin before the last refresh started on (REFRESH_MARGIN_SECONDS,
-- service/store/definitions.py), which covers inserts that were under way then (a request's signals carry
-- its arrival); recomputing an identity twice gives the same row. Every
-- identity is recomputed on the first refresh of a UTC day (the windows and the decay move with the day),
-- and on the first after a credibility or the half-life changed or a row of fleet_refresh_requests asked for
-- it (each written, and so visible, before the refresh that starts after its time). An
-- identity recomputed without a reputation today (its events left the windows) leaves the table, as with a
-- full refresh.
WITH
    toDate(now(), 'UTC') AS today,
    (SELECT max(computed_at) FROM reputation_scores) AS last_refresh,
    last_refresh - toIntervalSecond({{refresh_margin_seconds}}) AS since,
    toDate(last_refresh, 'UTC') < today
        OR (SELECT max(requested_at) FROM fleet_refresh_requests) >= last_refresh
        OR (SELECT max(updated_at) FROM source_credibility) >= last_refresh
        OR (SELECT max(updated_at) FROM reputation_model) >= last_refresh AS everyone,
    changed AS
    (
        SELECT tenant, identity FROM reputation_events WHERE inserted_at >= since
        UNION DISTINCT
        SELECT tenant, identity FROM identity_run_days WHERE written_at >= since
    ),
    activity AS
    (
        SELECT
            tenant,
            identity,
            count() AS runs,
            countIf(latest.2 = 'execution_error') AS execution_errors,
            countIf(latest.2 != 'execution_error' AND latest.3 = 'unsafe_for_production') AS unsafe_runs,
            max(latest.1) AS last_run_at,
            sumMapIf(map(latest.4, toUInt64(1)), latest.2 != 'execution_error' AND latest.4 != '') AS primary_failures,
            sumMapIf(map(latest.4, toInt64(latest.5)), latest.2 != 'execution_error' AND latest.4 != '')
                AS primary_impacts
        FROM
        (
            SELECT
                tenant,
                identity,
                argMax((run_at, execution_status, readiness, primary_failure, primary_impact), version) AS latest
            FROM identity_run_days
            WHERE day BETWEEN today - ({{window_days}} - 1) AND today
              AND (everyone OR (tenant, identity) IN changed)
            GROUP BY tenant, identity, run_id
        )
        GROUP BY tenant, identity
    )
SELECT
    tenant, identity, as_of, now64(3, 'UTC') AS computed_at, overall, task_quality, economic, identity_hygiene,
    confidence, toUInt64(events) AS events, toUInt64(positive_events) AS positive_events,
    toUInt64(negative_events) AS negative_events, CAST(failures, 'Map(String, UInt64)') AS failures, score_7d_ago,
    score_30d_ago, trend_7d, trend_30d, activity.runs AS runs, activity.execution_errors AS execution_errors,
    activity.unsafe_runs AS unsafe_runs, if(runs = 0, NULL, activity.last_run_at) AS last_run_at,
    activity.primary_failures AS primary_failures, activity.primary_impacts AS primary_impacts
FROM reputation_at(as_of = today) AS scores
LEFT JOIN activity USING (tenant, identity)
WHERE everyone OR (tenant, identity) IN changed
UNION ALL
SELECT
    tenant, identity, as_of, now64(3, 'UTC') AS computed_at, overall, task_quality, economic, identity_hygiene,
    confidence, events, positive_events, negative_events, failures, score_7d_ago, score_30d_ago, trend_7d, trend_30d,
    runs, execution_errors, unsafe_runs, last_run_at, primary_failures, primary_impacts
FROM reputation_scores FINAL
WHERE NOT everyone AND (tenant, identity) NOT IN changed
