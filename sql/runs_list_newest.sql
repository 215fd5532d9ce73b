-- The runs list (sql/runs_list.sql) from the newest versions only: the {candidates} newest versions of the
-- tenant's runs by (run_at, run_id) among those passing the filters that no version changes (identity,
-- suite, parent run, the time range, the page's cursor), read in order from a projection (migrations/0019),
-- newest first, each with `shown`: it is its run's latest version and passes the filters of
-- sql/runs_list.sql. A run whose latest version is newer than the oldest candidate has that version among
-- the candidates, so the shown rows are exact down to the oldest candidate; all of them when fewer than
-- {candidates} came (nothing is older). A version stored twice counts twice among the candidates and is
-- shown once. The filters are those of sql/runs_list.sql, from the same files (sql/runs_filters/).
-- service.store.runs.list_runs takes its page from here when it lies in that range.
-- The latest versions come from FINAL over the candidates' runs alone (a pk lookup; FINAL also keeps the
-- engine from scanning a projection for them). {{summary_columns}}: the columns of a list's row
-- (service.model.RunSummary), which the projections hold (tests/test_model_columns.py). `newest` is read twice: a version written between the two
-- reads can push a candidate out of the second, and that run out of this one page.
WITH
    newest AS
    (
        SELECT version, {{summary_columns}}
        FROM runs
        WHERE tenant = {tenant:String}
          AND {{unchanging}}
          AND {{window}}
        ORDER BY run_at DESC, run_id DESC
        LIMIT {candidates:UInt32}
    )
SELECT
    {{summary_columns}},
    -- a version stored twice (a retried insert before the engine merged it) is shown once
    row_number() OVER (PARTITION BY run_id, version) = 1
    AND (run_id, version) IN (
        SELECT run_id, version
        FROM runs FINAL
        PREWHERE tenant = {tenant:String} AND run_id IN (SELECT run_id FROM newest)
    )
    AND {{verdict}} AS shown
FROM newest
ORDER BY run_at DESC, run_id DESC
