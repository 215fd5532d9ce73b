-- Why one identity's reputation is what it is at as_of (SPEC §7.1 explain), from its raw events, weighed by
-- the credibility of their source and the decay as the reputation is (sql/definitions/reputation_at.sql), with
-- the same placeholders (service/reputation/model.py, service/store/definitions.py). One result of four parts:
--   event_type: per category, event type and window (offset_days 0: the window ending at as_of; the first trend
--               offset: the one ending that many days earlier), the counted events (not capped, credible),
--               Σδ·c·w, Σc·w and the type's own score;
--   category:   the same per category and window over all its types, and the category's score;
--   reference:  the 10 references (runs, sessions, transactions ...) of the current window whose counted
--               events moved the score most, by |Σδ·c·w|;
--   capped:     per source, the events of the current window stored over the daily cap.
-- A retraction (sign -1, migrations/0010) takes its event out of every figure: the sums and counts are
-- signed, and a type, category or reference whose events were all retracted is left out. The four parts come
-- from one read of the identity's events (GROUPING SETS, each part summing the rows it counts) instead of one
-- read each: a read opens every part of the months the windows span.
WITH
    {{half_life_in_force}} AS half_life,
    arraySlice({{window_offsets}}, 1, 2) AS explained_offsets,
    {{reported_score}} AS reported_score,
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
            toDecimal128(confidence * weight * credibility * decay, 18) * sign AS weighed,
            NOT capped AND credibility > 0 AS counted,
            counted AND offset_days = 0 AND reference_id != '' AS referenced,
            capped AND offset_days = 0 AS kept_out
        FROM reputation_events
        LEFT JOIN {{credibilities_set}} AS known USING (tenant, source)
        ARRAY JOIN explained_offsets AS offset_days
        WHERE tenant = {tenant:String} AND identity = {identity:String}
          AND toDate(timestamp, 'UTC') BETWEEN {as_of:Date} - (arrayMax(explained_offsets) + {{window_days}} - 1)
              AND {as_of:Date}
          AND day BETWEEN window_end - ({{window_days}} - 1) AND window_end
    )
SELECT part, category, event_type, reference_type, reference_id, source, offset_days, events, weighted_delta, weight,
       score
FROM
(
    SELECT
        multiIf(grouping(event_type) = 0, 'event_type', grouping(offset_days) = 0, 'category',
                grouping(reference_id) = 0, 'reference', 'capped') AS part,
        part IN ('event_type', 'category') AS scored,
        category,
        event_type,
        reference_type,
        reference_id,
        source,
        offset_days,
        multiIf(scored, sumIf(sign, counted), part = 'reference', sumIf(sign, referenced), sumIf(sign, kept_out))
            AS events,
        multiIf(scored, toFloat64(sumIf(moved, counted)), part = 'reference', toFloat64(sumIf(moved, referenced)), 0.)
            AS weighted_delta,
        multiIf(scored, toFloat64(sumIf(weighed, counted)), part = 'reference', toFloat64(sumIf(weighed, referenced)), 0.)
            AS weight,
        if(scored, arrayMap(reported_score, [weighted_delta / nullIf(weight, 0)])[1], NULL) AS score,
        countIf(kept_out) AS capped_rows,
        row_number() OVER (PARTITION BY part ORDER BY events = 0, abs(weighted_delta) DESC, reference_type, reference_id)
            AS rank
    FROM window_events
    GROUP BY GROUPING SETS (
        (category, event_type, offset_days), (category, offset_days), (reference_type, reference_id), (source))
)
WHERE if(part = 'capped', capped_rows > 0, events != 0) AND (part != 'reference' OR rank <= 10)
