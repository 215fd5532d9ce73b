-- Finalized runs of one tenant in a time range, latest version of each (SPEC §8 reads). Shared by the
-- alert rules (sql/alerts/) and the dashboards (sql/dashboards/). `finalized` is a run's last state: the
-- finalized version is its newest, so filtering on status and run_at before de-duplicating is exact.
CREATE VIEW IF NOT EXISTS finalized_runs {{on_cluster}} AS
SELECT
    run_id, identity, suite, task_id, trial, run_at, execution_status, failure_stage, failure_reason_code,
    score, trust_score, readiness, primary_failure, loop_control, memory_integrity, tool_output_utilization,
    context_health, cost_efficiency, skill_adherence, session_composite, event_count, tool_calls, errors,
    total_tokens
FROM runs
WHERE tenant = {tenant:String}
  AND status = 'finalized'
  AND run_at >= {since:DateTime64(3, 'UTC')}
  AND run_at <= {until:DateTime64(3, 'UTC')}
ORDER BY run_id, version DESC
LIMIT 1 BY run_id;

-- Alert transitions (SPEC §11): one row per change of an alert (firing, resolved, firing again ...), in
-- `seq` order per (tenant, alert key). A transition is written before the webhook is called, with
-- notified = 0; delivery writes the same row with notified = 1, which replaces it. So a change seen while
-- the webhook is down, or just before a restart, is still delivered, and delivered once.
CREATE TABLE IF NOT EXISTS alert_state {{on_cluster}}
(
    tenant     LowCardinality(String),
    alert_key  String,
    seq        UInt32,
    status     LowCardinality(String),
    alert      LowCardinality(String),
    severity   LowCardinality(String),
    subject    String,
    value      Float64,
    baseline   Nullable(Float64),
    message    String,
    changed_at DateTime64(3, 'UTC'),
    notified   UInt8
)
ENGINE = {{replicated}}ReplacingMergeTree(notified)
ORDER BY (tenant, alert_key, seq);
