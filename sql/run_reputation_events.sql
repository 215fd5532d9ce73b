-- What a rebuild reads for some of a tenant's runs (service.services.rebuild), found by identity (the
-- table's sort key after the tenant): every reputation event stored for the runs, retractions included
-- (the runs' own events, source `repute`, whose reference is one of the runs: `run_ids`), and every row
-- stored under some event ids, whatever its source (`ids`: the ids a rebuild means to write, and a row
-- there is an occupant, service.reputation.rebuild; the bloom filter index on event_id finds them). Each
-- with the source and cap flag it was stored with. No time bound: an event of the run is found whatever
-- timestamp a past version gave it.
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
  AND ((reference_id IN {run_ids:Array(String)} AND source = {source:String}) OR event_id IN {ids:Array(UUID)})
ORDER BY identity, reference_id, event_id
LIMIT 1 BY identity, event_id
