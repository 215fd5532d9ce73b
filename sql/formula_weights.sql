-- What a read of one tenant's identities weighs the formula with (service.store.definitions.BOUND_WEIGHTS), as
-- the view reads them (READ_TIME_WEIGHTS): a row of the half-life in force (0: none), then a row for each source
-- whose credibility an admin set, with the last one set (by updated_at).
SELECT true AS is_half_life, '' AS source, argMax(half_life_days, updated_at) AS value
FROM reputation_model
UNION ALL
SELECT false, source, argMax(credibility, updated_at)
FROM source_credibility
WHERE tenant = {tenant:String}
GROUP BY source
