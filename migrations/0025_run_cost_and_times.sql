-- Run lists show each run's start, duration, tokens and cost (issue #41).
--
-- A run's cost in US dollars: the sum of its token_usage events' cost_usd (Claude Code sessions record it per
-- API request; a trace's model calls when an attribute gives it, SPEC §3.4), NULL when no event names one: a
-- run of unknown cost is not a run that cost nothing. Runs stored before this column read NULL.
ALTER TABLE runs {{on_cluster}} ADD COLUMN IF NOT EXISTS cost_usd Nullable(Float64) AFTER total_tokens;

-- A list's row now holds the run's start and end (its duration) and its cost, so both newest-first projections
-- (migrations/0019, 0021) hold them too: a query asking a column a projection lacks reads the table.
ALTER TABLE runs {{on_cluster}} DROP PROJECTION IF EXISTS newest_first;
ALTER TABLE runs {{on_cluster}} ADD PROJECTION IF NOT EXISTS newest_first
(
    SELECT
        tenant, run_id, version, identity, kind, suite, task_id, trial, run_at, created_at, finalized_at, status,
        execution_status, failure_stage, failure_reason_code, score, trust_score, readiness, primary_failure,
        primary_impact, session_composite, event_count, tool_calls, errors, total_tokens, parent_run_id,
        started_at, ended_at, cost_usd
    ORDER BY tenant, run_at, run_id
);
ALTER TABLE runs {{on_cluster}} DROP PROJECTION IF EXISTS identity_newest_first;
ALTER TABLE runs {{on_cluster}} ADD PROJECTION IF NOT EXISTS identity_newest_first
(
    SELECT
        tenant, run_id, version, identity, kind, suite, task_id, trial, run_at, created_at, finalized_at, status,
        execution_status, failure_stage, failure_reason_code, score, trust_score, readiness, primary_failure,
        primary_impact, session_composite, event_count, tool_calls, errors, total_tokens, parent_run_id,
        started_at, ended_at, cost_usd
    ORDER BY tenant, identity, run_at, run_id
);
ALTER TABLE runs {{on_cluster}} MATERIALIZE PROJECTION newest_first;
ALTER TABLE runs {{on_cluster}} MATERIALIZE PROJECTION identity_newest_first;
