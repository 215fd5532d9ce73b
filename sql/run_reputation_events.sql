-- Every reputation event stored for some of a tenant's runs, retractions included: the runs' own events
-- (source `repute`) whose reference is one of the runs, found by identity (the table's sort key after
-- the tenant). No time bound: an event of the run is found whatever timestamp a past version gave it.
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
    sign
FROM reputation_events
WHERE tenant = {tenant:String}
  AND identity IN {identities:Array(String)}
  AND reference_id IN {run_ids:Array(String)}
  AND source = {source:String}
ORDER BY identity, reference_id, event_id
LIMIT 1 BY identity, event_id
