-- A page of one tenant's runs in run id order, after the run id given ('' for the first page): the
-- latest version of each, every status, as a list shows it ({{summary_columns}}: service.model.RunSummary),
-- which holds what reputation emission needs of it (the rebuild walks a tenant's runs this way,
-- service/services/rebuild.py).
SELECT {{summary_columns}}
FROM runs
WHERE tenant = {tenant:String} AND run_id > {after:String}
ORDER BY run_id, version DESC
LIMIT 1 BY run_id
LIMIT {limit:UInt32}
