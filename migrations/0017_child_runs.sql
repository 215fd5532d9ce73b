-- Multi-agent runs (SPEC §3.5): a child run names the run it is part of. Every agent of a trace other than
-- the root agent gets a child run `<run_id>:<identity>` of the trace's run, and a posted run may name its
-- parent itself. The index serves `GET /v1/runs/{run_id}` (its child runs) and `GET /v1/runs?parent=`.
ALTER TABLE runs {{on_cluster}} ADD COLUMN IF NOT EXISTS parent_run_id String DEFAULT '';
ALTER TABLE runs {{on_cluster}} ADD INDEX IF NOT EXISTS parent_run_index parent_run_id TYPE bloom_filter GRANULARITY 4;
ALTER TABLE runs {{on_cluster}} MATERIALIZE INDEX parent_run_index;
