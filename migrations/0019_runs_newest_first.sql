-- The runs list's pages without reading every run (issue #31, sql/runs_list_newest.sql). The list shows
-- each run's latest version, newest first by (run_at, run_id); the table is sorted by run id, so a page
-- collapsed the versions of all the tenant's runs (FINAL) to find the newest: 1-2 s for 1,000,000 runs on
-- a loaded host (`python -m bench scale`), growing with the runs. Two projections keep the list's columns
-- of every version sorted by run time, for the tenant and for each identity, so that a page reads the
-- newest versions in order and looks up only their runs' latest versions (service.store.runs.list_runs).
-- A ReplacingMergeTree keeps a projection only when its merges rebuild it (a merge drops the versions it
-- replaces, and the projection with them). Parts written before this migration get theirs from
-- MATERIALIZE PROJECTION, a background mutation; until then a page reads them whole, with the same result.
ALTER TABLE runs {{on_cluster}} MODIFY SETTING deduplicate_merge_projection_mode = 'rebuild';

ALTER TABLE runs {{on_cluster}} ADD PROJECTION IF NOT EXISTS newest_first
(
    SELECT
        tenant, run_id, version, identity, kind, suite, task_id, trial, run_at, created_at, finalized_at, status,
        execution_status, failure_stage, failure_reason_code, score, trust_score, readiness, primary_failure,
        session_composite, event_count, tool_calls, errors, total_tokens, parent_run_id
    ORDER BY tenant, run_at, run_id
);

ALTER TABLE runs {{on_cluster}} ADD PROJECTION IF NOT EXISTS identity_newest_first
(
    SELECT
        tenant, run_id, version, identity, kind, suite, task_id, trial, run_at, created_at, finalized_at, status,
        execution_status, failure_stage, failure_reason_code, score, trust_score, readiness, primary_failure,
        session_composite, event_count, tool_calls, errors, total_tokens, parent_run_id
    ORDER BY tenant, identity, run_at, run_id
);

ALTER TABLE runs {{on_cluster}} MATERIALIZE PROJECTION newest_first;

ALTER TABLE runs {{on_cluster}} MATERIALIZE PROJECTION identity_newest_first;
