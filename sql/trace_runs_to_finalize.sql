-- Open trace-born runs (of every tenant) to finalize now: those whose root span has arrived and that
-- received no span since the settle cutoff, and those that received nothing since the idle cutoff.
SELECT open_runs.tenant AS tenant, open_runs.run_id AS run_id
FROM
(
    SELECT tenant, run_id
    FROM runs
    WHERE kind = 'trace'
    GROUP BY tenant, run_id
    HAVING argMax(status, version) = 'open'
) AS open_runs
INNER JOIN
(
    SELECT tenant, run_id, max(ingested_at) AS last_seen, max(is_root) AS rooted
    FROM trace_spans
    GROUP BY tenant, run_id
) AS activity
ON open_runs.tenant = activity.tenant AND open_runs.run_id = activity.run_id
WHERE (activity.rooted AND activity.last_seen < {settled_before:DateTime64(3, 'UTC')})
   OR activity.last_seen < {idle_before:DateTime64(3, 'UTC')}
ORDER BY tenant, run_id
