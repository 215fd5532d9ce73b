-- The latest version of each of some runs (the runs list's candidates, sql/runs_list_newest.sql): the
-- highest, which the table keeps of each run (a ReplacingMergeTree by version). Read by the table's key, one
-- granule of each part a run has rows in; no FINAL, which would merge what max() already decides. The
-- projections are left out as for every read of runs by id (service.store.runs.BY_RUN_ID).
SELECT run_id, max(version)
FROM runs
PREWHERE tenant = {tenant:String} AND run_id IN {run_ids:Array(String)}
GROUP BY run_id
SETTINGS optimize_use_projections = 0
