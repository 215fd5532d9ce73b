-- The runs list (sql/runs_list.sql) from the newest versions only: the {candidates} newest versions of the
-- tenant's runs by (run_at, run_id) among those passing the filters that no version changes (identity,
-- suite, parent run, the time range, the page's cursor), read in order from a projection (migrations/0019),
-- newest first, each with its version and `passes`: it passes the filters of what versions change. A run
-- whose latest version is newer than the oldest candidate has that version among the candidates, so the
-- page is exact down to the oldest candidate once each candidate is known to be its run's latest version
-- (sql/run_latest_versions.sql); all of it when fewer than {candidates} came (nothing is older).
-- The filters are those of sql/runs_list.sql, from the same files (sql/runs_filters/).
-- service.store.runs.list_runs takes its page from here when it lies in that range.
-- {{summary_columns}}: the columns of a list's row (service.model.RunSummary), which the projections hold
-- (tests/test_model_columns.py).
SELECT version, {{summary_columns}}, {{verdict}} AS passes
FROM runs
WHERE tenant = {tenant:String}
  AND {{unchanging}}
  AND {{window}}
ORDER BY run_at DESC, run_id DESC
LIMIT {candidates:UInt32}
