-- Open OTLP sessions (of every tenant) that have received no record since the cutoff.
SELECT open_sessions.tenant AS tenant, open_sessions.run_id AS run_id
FROM
(
    SELECT tenant, run_id
    FROM runs
    WHERE kind = 'session'
    GROUP BY tenant, run_id
    HAVING argMax(status, version) = 'open'
) AS open_sessions
INNER JOIN
(
    SELECT tenant, session_id, max(ingested_at) AS last_seen
    FROM session_records
    GROUP BY tenant, session_id
) AS activity
ON open_sessions.tenant = activity.tenant AND open_sessions.run_id = activity.session_id
WHERE activity.last_seen < {cutoff:DateTime64(3, 'UTC')}
ORDER BY tenant, run_id
