-- What every reputation read of a tenant weighs the daily sums with (SPEC §7.1): the half-life in force
-- (0 = no decay) and the credibility of each source that has one (latest write wins; others have 1).
SELECT
    ifNull((SELECT argMax(half_life_days, updated_at) FROM reputation_model), 0) AS half_life_days,
    groupArray(source) AS sources,
    groupArray(credibility) AS credibilities
FROM
(
    SELECT source, argMax(credibility, updated_at) AS credibility
    FROM source_credibility
    WHERE tenant = {tenant:String}
    GROUP BY source
)
