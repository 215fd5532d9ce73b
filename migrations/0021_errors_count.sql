-- Errors count (SPEC §4.2, issue #38).
--
-- A diagnosis profile names the detectors it runs (SPEC §4.1). Profiles defined before this column run every
-- detector: an empty array means every one (service.store.profiles); the service always writes the names.
ALTER TABLE diagnosis_profiles {{on_cluster}} ADD COLUMN IF NOT EXISTS detectors Array(LowCardinality(String)) DEFAULT [];

-- "Top failure" is the failure that is the primary failure of most of an agent's runs in the window; ties go
-- to the larger summed impact, so each run keeps its primary cause's impact (0 without a cause). Runs stored
-- before this column were judged by Critiqor's six detectors only, whose primary cause's |impact| is its
-- dimension's penalty: 100 minus the dimension score.
ALTER TABLE runs {{on_cluster}} ADD COLUMN IF NOT EXISTS primary_impact Int16 DEFAULT multiIf(
    primary_failure = 'infinite_tool_loop', toInt16(loop_control) - 100,
    primary_failure = 'memory_degradation', toInt16(memory_integrity) - 100,
    primary_failure = 'ignoring_tool_outputs', toInt16(tool_output_utilization) - 100,
    primary_failure = 'context_pollution', toInt16(context_health) - 100,
    primary_failure = 'cost_explosion', toInt16(cost_efficiency) - 100,
    primary_failure = 'skill_failure', toInt16(skill_adherence) - 100,
    0) AFTER primary_failure;

-- The fleet's and an agent's run figures read their window's runs from the projections of migrations/0019,
-- which now hold the primary impact too (a query asking a column a projection lacks reads the table).
ALTER TABLE runs {{on_cluster}} DROP PROJECTION IF EXISTS newest_first;
ALTER TABLE runs {{on_cluster}} ADD PROJECTION IF NOT EXISTS newest_first
(
    SELECT
        tenant, run_id, version, identity, kind, suite, task_id, trial, run_at, created_at, finalized_at, status,
        execution_status, failure_stage, failure_reason_code, score, trust_score, readiness, primary_failure,
        primary_impact, session_composite, event_count, tool_calls, errors, total_tokens, parent_run_id
    ORDER BY tenant, run_at, run_id
);
ALTER TABLE runs {{on_cluster}} DROP PROJECTION IF EXISTS identity_newest_first;
ALTER TABLE runs {{on_cluster}} ADD PROJECTION IF NOT EXISTS identity_newest_first
(
    SELECT
        tenant, run_id, version, identity, kind, suite, task_id, trial, run_at, created_at, finalized_at, status,
        execution_status, failure_stage, failure_reason_code, score, trust_score, readiness, primary_failure,
        primary_impact, session_composite, event_count, tool_calls, errors, total_tokens, parent_run_id
    ORDER BY tenant, identity, run_at, run_id
);
ALTER TABLE runs {{on_cluster}} MATERIALIZE PROJECTION newest_first;
ALTER TABLE runs {{on_cluster}} MATERIALIZE PROJECTION identity_newest_first;
