-- One identity's reputation (SPEC §7) for any day, computed from the daily aggregates.
SELECT
    identity, as_of, overall, task_quality, economic, identity_hygiene, confidence, events,
    positive_events, negative_events, failures, score_7d_ago, score_30d_ago, trend_7d, trend_30d
FROM reputation_at(as_of = {as_of:Date})
WHERE tenant = {tenant:String} AND identity = {identity:String}
