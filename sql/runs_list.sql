-- Runs of one tenant, latest version of each, newest first, with optional filters ('' / NULL = any)
-- and keyset pagination on (run_at, run_id). FINAL keeps the latest version of each run (the table is a
-- ReplacingMergeTree by version), at far less cost than sorting every version of the tenant's runs by run
-- id to take the first of each (`python -m bench store` measures both pages: bench/README.md).
-- The filters are sql/runs_filters/, rendered in by service.store.runs (as into sql/runs_list_newest.sql).
-- identity, suite and parent_run_id never change, so they filter before the de-duplication of versions
-- (PREWHERE); the rest change between versions and filter after it, which the setting below keeps so.
-- {{summary_columns}}: the columns of a list's row (service.model.RunSummary).
SELECT {{summary_columns}}
FROM runs FINAL
PREWHERE {{unchanging}}
WHERE tenant = {tenant:String}
  AND {{verdict}}
  AND {{window}}
ORDER BY run_at DESC, run_id DESC
LIMIT {limit:UInt32}
SETTINGS optimize_move_to_prewhere_if_final = 0
