-- Why one identity's reputation is what it is at as_of (SPEC §7.1 explain), from its raw events, weighed by
-- the credibility of their source and the decay as the reputation is (sql/definitions/reputation_at.sql), with
-- the same placeholders (service/reputation/model.py, service/store/definitions.py). One result of four parts:
--   event_type: per category, event type and window (offset_days 0: the window ending at as_of; the first trend
--               offset: the one ending that many days earlier), the counted events (not capped, credible),
--               Σδ·c·w, Σc·w and the type's own score;
--   category:   the same per category and window over all its types, and the category's score;
--   reference:  the 10 references (runs, sessions, transactions ...) of the current window whose counted
--               events moved the score most, by |Σδ·c·w|; a signal posted without a reference counts under
--               its event type (reference_id '', event_type set), so a failed payment is listed beside the
--               runs. Each with `points`: what it adds to the overall score as reported (its Σδ·c·w over its
--               category's Σc·w, weighed as the category is in the overall: Σ_c w_c·moved_c/weight_c / Σ w_c
--               over the categories with events, on the reported scale), which breaks ties of |Σδ·c·w| (ten
--               runs at +1.0 move the score less than one failed payment at -1.0);
--   capped:     per source, the events of the current window stored over the daily cap.
-- A retraction (sign -1, migrations/0010) takes its event out of every figure: the sums and counts are
-- signed, and a type, category or reference whose events were all retracted is left out.
WITH
    {{half_life_in_force}} AS half_life,
    arraySlice({{window_offsets}}, 1, 2) AS explained_offsets,
    {{reported_score}} AS reported_score,
    mapFromArrays({{categories}}, {{category_weights}}) AS category_weight_of,
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
            {as_of:Date} - offset_days AS window_end,
            ifNull(known.credibility, {{default_credibility}}) AS credibility,
            {{decay}} AS decay,
            sign,
            toDecimal128(score_delta * confidence * weight * credibility * decay, 18) * sign AS moved,
            toDecimal128(confidence * weight * credibility * decay, 18) * sign AS weighed
        FROM reputation_events
        LEFT JOIN {{credibilities_set}} AS known USING (tenant, source)
        ARRAY JOIN explained_offsets AS offset_days
        WHERE tenant = {tenant:String} AND identity = {identity:String}
          AND toDate(timestamp, 'UTC') BETWEEN {as_of:Date} - (arrayMax(explained_offsets) + {{window_days}} - 1)
              AND {as_of:Date}
          AND day BETWEEN window_end - ({{window_days}} - 1) AND window_end
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
    if(grouping(event_type) = 1, 'category', 'event_type') AS part,
    category,
    event_type,
    '' AS reference_type,
    '' AS reference_id,
    '' AS source,
    offset_days,
    sum(sign) AS events,
    toFloat64(sum(moved)) AS weighted_delta,
    toFloat64(sum(weighed)) AS weight,
    arrayMap(reported_score, [weighted_delta / nullIf(weight, 0)])[1] AS score,
    0. AS points
FROM window_events
WHERE NOT capped AND credibility > 0
GROUP BY GROUPING SETS ((category, event_type, offset_days), (category, offset_days))
HAVING events != 0
UNION ALL
SELECT *
FROM
(
    SELECT
        'reference', '', signal_type, reference_type, reference_id, '', 0, sum(category_events) AS reference_events,
        toFloat64(sum(category_moved)) AS weighted_delta, toFloat64(sum(category_weighed)), NULL,
        arrayMap(reported_score, [sum(if(category_weight = 0, 0., category_weight_of[category]
            * toFloat64(category_moved) / category_weight / weights_total))])[1]
            - arrayMap(reported_score, [0.])[1] AS points
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
SELECT 'capped', '', '', '', '', source, 0, sum(sign), 0., 0., NULL, 0.
FROM window_events
WHERE offset_days = 0 AND capped
GROUP BY source
