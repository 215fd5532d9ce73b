-- The runs list (sql/runs_list.sql) from the newest versions only: the {candidates} newest versions of the
-- tenant's runs by (run_at, run_id) among those passing every filter (identity, suite, parent run, the verdict,
-- the time range, the page's cursor), read in order from a projection (migrations/0019), newest first, each
-- with its version. A run whose latest version passes and is newer than the oldest candidate has that version
-- among the candidates, so the page is exact down to the oldest candidate once each candidate is known to be
-- its run's latest version (sql/run_latest_versions.sql); all of it when fewer than {candidates} came (nothing
-- older passes). A filter that few versions pass reads the projection deep, a column filter on each row, and
-- no version of the runs it skips is sorted or merged.
-- The filters are those of sql/runs_list.sql, from the same files (sql/runs_filters/).
-- service.store.runs.list_runs takes its page from here when it lies in that range.
-- {{summary_columns}}: the columns of a list's row (service.model.RunSummary), which the projections hold
-- (tests/test_model_columns.py).
SELECT version, {{summary_columns}}
FROM runs
WHERE tenant = {tenant:String}
  AND {{unchanging}}
  AND {{verdict}}
  AND {{window}}
ORDER BY run_at DESC, run_id DESC
LIMIT {candidates:UInt32}
