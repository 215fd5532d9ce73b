-- The rows stored under some of a tenant's (identity, event id) pairs, whatever their source, with the
-- source and cap flag they were stored with: what a rebuild finds under the ids it means to write
-- (service.reputation.rebuild, occupants). Found by identity (the sort key after the tenant) and by the
-- bloom filter index on event_id; the caller keeps the pairs it asked for.
SELECT
    event_id,
    timestamp,
    identity,
    category,
    event_type,
    score_delta,
    confidence,
    weight,
    reference_type,
    reference_id,
    attributes,
    sign,
    source,
    capped
FROM reputation_events
WHERE tenant = {tenant:String}
  AND identity IN {identities:Array(String)}
  AND event_id IN {ids:Array(UUID)}
ORDER BY identity, event_id
LIMIT 1 BY identity, event_id
