-- When something one identity's reputation on as_of is computed from was last written: its daily sums of
-- the days the windows span (written_at: migrations 0026, 0027), its runs' figures of the window (written_at:
-- 0022), the tenant's credibilities, the half-life, a request for a full refresh. Each branch reads a few
-- granules of the identity's own rows or a table of a few rows; a branch with no row reads 1970.
SELECT max(written) AS last_write
FROM
(
    SELECT max(written_at) AS written
    FROM reputation_daily_types
    WHERE tenant = {tenant:String} AND identity = {identity:String}
      AND day BETWEEN {as_of:Date} - (arrayMax({{window_offsets}}) + {{window_days}} - 1) AND {as_of:Date}
    UNION ALL
    SELECT max(written_at)
    FROM identity_run_days
    WHERE tenant = {tenant:String} AND identity = {identity:String}
      AND day BETWEEN {as_of:Date} - ({{window_days}} - 1) AND {as_of:Date}
    UNION ALL
    SELECT max(updated_at) FROM source_credibility WHERE tenant = {tenant:String}
    UNION ALL
    SELECT max(updated_at) FROM reputation_model
    UNION ALL
    SELECT max(requested_at) FROM fleet_refresh_requests
)
