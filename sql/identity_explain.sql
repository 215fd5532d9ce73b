-- Why one identity's reputation is what it is at as_of (SPEC §7.1 explain), from its raw events with
-- the credibility of their source and the decay in force, as in sql/identity_daily_sources.sql. One result
-- of three parts:
--   event_type: per category, event type and window (offset_days 0: the 90 days ending at as_of; 7: the
--               same 7 days earlier), the counted events (not capped, credible), Σδ·c·w and Σc·w;
--   reference:  the 10 references (runs, sessions, transactions ...) of the current window whose
--               counted events moved the score most, by |Σδ·c·w|; a signal posted without a reference
--               counts under its event type (reference_id '', event_type set), so a failed payment is
--               listed beside the runs. Each with `points`: what it adds to the overall score on 0..100
--               (its Σδ·c·w over its category's Σc·w, weighed as the category is in the overall: 50 ×
--               Σ_c w_c·moved_c/weight_c / Σ w_c over the categories with events), which breaks ties of
--               |Σδ·c·w| (ten runs at +1.0 move the score less than one failed payment at -1.0);
--   capped:     per source, the events of the current window stored over the daily cap.
-- A retraction (sign -1, migrations/0010) takes its event out of every figure: the sums and counts are
-- signed, and a type or reference whose events were all retracted is left out.
WITH
    ifNull((SELECT argMax(half_life_days, updated_at) FROM reputation_model), 0) AS half_life,
    mapFromArrays({categories:Array(String)}, {weights:Array(Float64)}) AS category_weight_of,
    (
        SELECT CAST((groupArray(source), groupArray(credibility)), 'Map(String, Float64)')
        FROM
        (
            SELECT source, argMax(credibility, updated_at) AS credibility
            FROM source_credibility
            WHERE tenant = {tenant:String}
            GROUP BY source
        )
    ) AS credibilities,
    window_events AS
    (
        SELECT
            category,
            event_type,
            reference_type,
            reference_id,
            source,
            capped,
            offset_days,
            toDate(timestamp, 'UTC') AS day,
            if(mapContains(credibilities, source), credibilities[source], 1.) AS credibility,
            if(half_life = 0, 1., exp2(toInt32(day - ({as_of:Date} - offset_days)) / half_life)) AS decay,
            sign,
            toDecimal128(score_delta * confidence * weight * credibility * decay, 18) * sign AS moved,
            toDecimal128(confidence * weight * credibility * decay, 18) * sign AS weighed
        FROM reputation_events
        ARRAY JOIN [0, 7] AS offset_days
        WHERE tenant = {tenant:String} AND identity = {identity:String}
          AND toDate(timestamp, 'UTC') BETWEEN {as_of:Date} - 96 AND {as_of:Date}
          AND day BETWEEN {as_of:Date} - offset_days - 89 AND {as_of:Date} - offset_days
    ),
    counted_now AS
    (
        SELECT * FROM window_events WHERE offset_days = 0 AND NOT capped AND credibility > 0
    ),
    category_weights AS
    (
        SELECT category, toFloat64(sum(weighed)) AS category_weight
        FROM counted_now
        GROUP BY category
        HAVING category_weight != 0
    ),
    (
        SELECT sum(category_weight_of[category]) FROM category_weights
    ) AS weights_total
SELECT
    'event_type' AS part,
    category,
    event_type,
    '' AS reference_type,
    '' AS reference_id,
    '' AS source,
    offset_days,
    sum(sign) AS events,
    toFloat64(sum(moved)) AS weighted_delta,
    toFloat64(sum(weighed)) AS weight,
    0. AS points
FROM window_events
WHERE NOT capped AND credibility > 0
GROUP BY category, event_type, offset_days
HAVING events != 0
UNION ALL
SELECT *
FROM
(
    SELECT
        'reference', '', signal_type, reference_type, reference_id, '', 0, sum(category_events) AS reference_events,
        toFloat64(sum(category_moved)) AS weighted_delta, toFloat64(sum(category_weighed)),
        sum(if(category_weight = 0, 0., 50 * category_weight_of[category]
            * toFloat64(category_moved) / category_weight / weights_total)) AS points
    FROM
    (
        SELECT
            reference_type, reference_id, if(reference_id = '', event_type, '') AS signal_type, category,
            sum(sign) AS category_events, sum(moved) AS category_moved, sum(weighed) AS category_weighed
        FROM counted_now
        GROUP BY reference_type, reference_id, signal_type, category
    ) AS by_category
    LEFT JOIN category_weights USING category
    GROUP BY reference_type, reference_id, signal_type
    HAVING reference_events != 0
    ORDER BY abs(weighted_delta) DESC, abs(points) DESC, reference_type, reference_id, signal_type
    LIMIT 10
)
UNION ALL
SELECT 'capped', '', '', '', '', source, 0, sum(sign), 0., 0., 0.
FROM window_events
WHERE offset_days = 0 AND capped
GROUP BY source
