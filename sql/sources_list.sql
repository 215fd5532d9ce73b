-- The sources of one tenant (SPEC §7.1, GET /v1/sources): each source with counted events or with a
-- credibility set by an admin, and its credibility in force (1 when never set, updated_at then null).
SELECT
    source,
    ifNull(chosen.credibility_set, 1.) AS credibility,
    chosen.set_at AS updated_at
FROM
(
    SELECT source
    FROM reputation_daily_types
    WHERE tenant = {tenant:String}
    GROUP BY source
    HAVING sum(counted_rows) != 0
) AS seen
FULL OUTER JOIN
(
    SELECT
        source,
        toNullable(argMax(credibility, updated_at)) AS credibility_set,
        toNullable(max(updated_at)) AS set_at
    FROM source_credibility
    WHERE tenant = {tenant:String}
    GROUP BY source
) AS chosen USING (source)
ORDER BY source
