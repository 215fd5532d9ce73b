-- SPEC §7 and §7.1 at one day: the query of the view reputation_at (every identity: the refreshable fleet
-- table, the alerts, Grafana) and, with its scope rendered as one tenant's identity, the API's read of one
-- identity (service.store.reputation.identity_reputation), and of one identity on each of several days
-- (`/history`: as_of_days, the days, rendered as an array parameter instead of [as_of]; a row per day,
-- each computed as alone). The placeholders are the model's, rendered from service/reputation/model.py, and
-- what it reads when it runs (the half-life in force, the credibilities set: service/store/definitions.py).
--
-- The windows end at as_of and at each trend offset before it (window_offsets: 0 first, then the offsets of
-- score_7d_ago and score_30d_ago). The exact daily sums of each event type and source (reputation_daily_types,
-- migration 0027) are weighed by a factor of the day and source
-- in each window, the source's credibility x the decay (0 outside the window) as a Decimal of 18 places, and
-- multiplied and summed in Decimal: a read is exact and reproducible to the bit whatever the parts hold, with no
-- merge of the parts first (a product of sums is the sum of the products). Per category and window S_c = Σδ·c·w /
-- Σc·w (null without weight); overall = Σ w_c·S_c / Σ w_c over the categories with a score, summed in the model's
-- order of categories. Confidence's N is the sum of credibility x decay over the counted events of the current
-- window; the counts leave out sources of credibility 0 and failure types whose events were all retracted.
WITH
    {{half_life_in_force}} AS half_life,
    {{window_offsets}} AS window_offsets,
    {{reported_score}} AS reported_score,
    {{as_of_days}} AS as_of_days
SELECT
    tenant,
    identity,
    as_of,
    overall_scores[1] AS overall,
    {{category_columns}},
    least(1., toFloat64(evidence) / {{full_confidence_events}}) AS confidence,
    events,
    positive_events,
    negative_events,
    failures,
    overall_scores[2] AS score_7d_ago,
    overall_scores[3] AS score_30d_ago,
    overall - score_7d_ago AS trend_7d,
    overall - score_30d_ago AS trend_30d
FROM
(
    -- Per identity: each category's S_c per window, in the model's order of categories.
    WITH
        arrayMap(category -> ratios_by_category[category], {{categories}}) AS by_category,
        {{category_weights}} AS category_weights
    SELECT
        tenant,
        identity,
        as_of,
        arrayMap(reported_score, arrayMap(ratios -> ratios[1], by_category)) AS category_scores,
        arrayMap(reported_score, arrayMap(
            window -> arraySum(arrayMap(
                    (ratios, weight) -> weight * ifNull(ratios[window], 0), by_category, category_weights))
                / nullIf(arraySum(arrayMap(
                    (ratios, weight) -> weight * (ratios[window] IS NOT NULL), by_category, category_weights)), 0),
            arrayEnumerate(window_offsets))) AS overall_scores,
        evidence,
        events,
        positive_events,
        negative_events,
        failures
    FROM
    (
        SELECT
            tenant,
            identity,
            as_of,
            CAST(groupArray((category, window_ratios)), 'Map(String, Array(Nullable(Float64)))') AS ratios_by_category,
            sum(category_evidence) AS evidence,
            sum(category_events) AS events,
            sum(category_positive) AS positive_events,
            sum(category_negative) AS negative_events,
            mapFilter((failure, count) -> count != 0, sumMap(category_failures)) AS failures
        FROM
        (
            -- Per category and day asked: S_c in each window, and the current window's evidence and counts, from
            -- the stored rows as the parts hold them: each row's sums times its (day, source) factor, credibility x
            -- decay, as an exact decimal, so that the products add up to the same sum however the engine split or
            -- merged a day's sums (no merge of the parts first).
            WITH
                {{credibility}} AS credibility,
                arrayMap(
                    window_end -> toDecimal256(
                        credibility * if(day BETWEEN window_end - ({{window_days}} - 1) AND window_end, {{decay}}, 0.), 18),
                    arrayMap(offset -> as_of - offset, window_offsets)) AS factors,
                credibility > 0 AND day >= as_of - ({{window_days}} - 1) AS counted
            SELECT
                tenant,
                identity,
                as_of,
                category,
                arrayMap(
                    (moved, weighed) -> toFloat64(moved) / nullIf(toFloat64(weighed), 0),
                    sumForEach(arrayMap(factor -> weighted_sum * factor, factors)),
                    sumForEach(arrayMap(factor -> weight_sum * factor, factors))
                ) AS window_ratios,
                sum(weighted_events * factors[1]) AS category_evidence,
                sumIf(weighted_events, counted) AS category_events,
                sumIf(positive_events, counted) AS category_positive,
                sumIf(negative_events, counted) AS category_negative,
                sumMapIf(map(substring(event_type, 9), events), counted AND startsWith(event_type, 'failure.'))
                    AS category_failures
            FROM reputation_daily_types
            ARRAY JOIN as_of_days AS as_of
            {{credibilities_join}}
            -- the days any as_of reads, bounds of constants that the sort key prunes by; then each as_of's own
            WHERE {{scope}}
              AND day BETWEEN arrayMin(as_of_days) - (arrayMax(window_offsets) + {{window_days}} - 1)
                  AND arrayMax(as_of_days)
              AND day BETWEEN as_of - (arrayMax(window_offsets) + {{window_days}} - 1) AND as_of
            GROUP BY tenant, identity, as_of, category
            -- a category with counted events only (the sums keep the capped ones' too)
            HAVING sum(counted_rows) != 0
        )
        GROUP BY tenant, identity, as_of
    )
)
