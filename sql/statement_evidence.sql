-- The reputation events of one identity that count in the window [first, as_of] (SPEC §15: a statement's
-- evidence): every row not capped, retractions included (sign -1), in (timestamp, event_id) order.
SELECT
    identity, event_id, timestamp, category, event_type, score_delta, confidence, weight, reference_type,
    reference_id, source, sign
FROM reputation_events
WHERE tenant = {tenant:String}
  AND identity = {identity:String}
  AND toDate(timestamp, 'UTC') BETWEEN {first:Date} AND {as_of:Date}
  AND capped = 0
ORDER BY timestamp, event_id
