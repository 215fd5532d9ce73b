-- What every reputation read of a tenant weighs the daily sums with (SPEC §7.1), as the writes stored:
-- each half-life written (0 = no decay) and each credibility written for one of the tenant's sources,
-- with when. The latest write of each wins (service.store.reputation.read_weights); a source without a
-- credibility has 1. Plain rows, without the scalar subquery and aggregates that cost the engine 4.9
-- instead of 2.9 ms a read (p50, embedded engine): every one-identity read runs this.
SELECT 'half_life' AS setting, '' AS source, half_life_days AS value, updated_at
FROM reputation_model
UNION ALL
SELECT 'credibility' AS setting, source, credibility AS value, updated_at
FROM source_credibility
WHERE tenant = {tenant:String}
