-- The runs list (sql/runs_list.sql) from the newest versions only: the {candidates} newest versions of the
-- tenant's runs by (run_at, run_id, version) among those passing the filters that no version changes
-- (identity, suite, parent run, the time range, the page's cursor), read in order from a projection
-- (migrations/0019), newest first, each with `shown`: it is its run's latest version and passes the filters
-- of sql/runs_list.sql. A run whose latest version is newer than the oldest candidate has that version among
-- the candidates, so the shown rows are exact down to the oldest candidate; all of them when fewer than
-- {candidates} came (nothing is older). A version stored twice counts twice among the candidates and is
-- shown once. The filters are those of sql/runs_list.sql, from the same files (sql/runs_filters/).
-- service.store.runs.list_runs takes its page from here when it lies in that range.
-- A run's latest version is known from the candidates themselves, without reading the table sorted by run
-- id: a run's finalized versions share one run time (the finalize sets it, a re-diagnosis keeps it), so its
-- later versions sort before it (the version breaks the tie) and are candidates too. Only an open version
-- can have a later one elsewhere (finalized with an earlier run time): those runs alone, the newest-first
-- page's in-flight runs, are looked up by run id. {{summary_columns}}: the columns of a list's row
-- (service.model.RunSummary), which the projections hold (tests/test_model_columns.py). `newest` is read
-- twice: a version written between the two reads can push a candidate out of the second, and that run out
-- of this one page.
WITH
    newest AS
    (
        SELECT version, {{summary_columns}}
        FROM runs
        WHERE tenant = {tenant:String}
          AND {{unchanging}}
          AND {{window}}
        ORDER BY run_at DESC, run_id DESC, version DESC
        LIMIT {candidates:UInt32}
    ),
    open_last AS
    (
        SELECT run_id
        FROM newest
        GROUP BY run_id
        HAVING argMax(status, version) = 'open'
    )
SELECT
    {{summary_columns}},
    -- a version stored twice (a retried insert before the engine merged it) is shown once
    row_number() OVER (PARTITION BY run_id, version) = 1
    AND version = max(version) OVER (PARTITION BY run_id)
    AND (
        run_id NOT IN open_last
        OR (run_id, version) IN (
            SELECT run_id, max(version)
            FROM runs
            PREWHERE tenant = {tenant:String} AND run_id IN open_last
            GROUP BY run_id
        )
    )
    AND {{verdict}} AS shown
FROM newest
ORDER BY run_at DESC, run_id DESC
