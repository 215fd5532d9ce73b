-- One identity's reputation on as_of and its runs' figures of the same window, as the fleet table's last
-- refresh computed them (sql/definitions/reputation_scores_mv.sql: the view reputation_at's query, so the
-- figures the formula gives), with the time that refresh started; no row when it computed another day or
-- the identity had no reputation then. The row holds while nothing it was computed from was written since
-- a margin before that time (sql/identity_last_write.sql; service.store.reputation.refreshed_reputation).
SELECT
    computed_at, overall, task_quality, economic, identity_hygiene, confidence, events, positive_events,
    negative_events, failures, score_7d_ago, score_30d_ago, trend_7d, trend_30d, runs, execution_errors,
    unsafe_runs, last_run_at, primary_failures, primary_impacts
FROM reputation_scores FINAL
WHERE tenant = {tenant:String} AND identity = {identity:String} AND as_of = {as_of:Date}
