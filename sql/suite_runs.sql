-- The finalized runs of one suite (latest version of each), oldest first so trials keep their order, as
-- a list shows them ({{summary_columns}}: service.model.RunSummary).
SELECT *
FROM
(
    SELECT {{summary_columns}}
    FROM runs
    WHERE tenant = {tenant:String} AND suite = {suite:String}
    ORDER BY run_id, version DESC
    LIMIT 1 BY run_id
)
WHERE status = 'finalized'
ORDER BY run_at, run_id
