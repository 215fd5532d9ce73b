-- Why one identity's reputation is what it is at as_of (SPEC §7.1 explain), from its raw events with
-- the credibility of their source and the decay in force, as in sql/identity_daily_sources.sql. One result
-- of three parts:
--   event_type: per category, event type and window (offset_days 0: the 90 days ending at as_of; 7: the
--               same 7 days earlier), the counted events (not capped, credible), Σδ·c·w and Σc·w;
--   reference:  the 10 references (runs, sessions, transactions ...) of the current window whose
--               counted events moved the score most, by |Σδ·c·w|;
--   capped:     per source, the events of the current window stored over the daily cap.
-- A retraction (sign -1, migrations/0010) takes its event out of every figure: the sums and counts are
-- signed, and a type or reference whose events were all retracted is left out. The three parts come from
-- one read of the identity's events (GROUPING SETS, each part summing the rows it counts) instead of one
-- read each: a read opens every part of the months the windows span.
WITH
    ifNull((SELECT argMax(half_life_days, updated_at) FROM reputation_model), 0) AS half_life,
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
            toDecimal128(confidence * weight * credibility * decay, 18) * sign AS weighed,
            NOT capped AND credibility > 0 AS counted,
            counted AND offset_days = 0 AND reference_id != '' AS referenced,
            capped AND offset_days = 0 AS kept_out
        FROM reputation_events
        ARRAY JOIN [0, 7] AS offset_days
        WHERE tenant = {tenant:String} AND identity = {identity:String}
          AND toDate(timestamp, 'UTC') BETWEEN {as_of:Date} - 96 AND {as_of:Date}
          AND day BETWEEN {as_of:Date} - offset_days - 89 AND {as_of:Date} - offset_days
    )
SELECT part, category, event_type, reference_type, reference_id, source, offset_days, events, weighted_delta, weight
FROM
(
    SELECT
        multiIf(grouping(event_type) = 0, 'event_type', grouping(reference_id) = 0, 'reference', 'capped') AS part,
        category,
        event_type,
        reference_type,
        reference_id,
        source,
        offset_days,
        multiIf(part = 'event_type', sumIf(sign, counted), part = 'reference', sumIf(sign, referenced),
                sumIf(sign, kept_out)) AS events,
        multiIf(part = 'event_type', toFloat64(sumIf(moved, counted)),
                part = 'reference', toFloat64(sumIf(moved, referenced)), 0.) AS weighted_delta,
        multiIf(part = 'event_type', toFloat64(sumIf(weighed, counted)),
                part = 'reference', toFloat64(sumIf(weighed, referenced)), 0.) AS weight,
        countIf(kept_out) AS capped_rows,
        row_number() OVER (PARTITION BY part ORDER BY abs(weighted_delta) DESC, reference_type, reference_id) AS rank
    FROM window_events
    GROUP BY GROUPING SETS ((category, event_type, offset_days), (reference_type, reference_id), (source))
)
WHERE if(part = 'capped', capped_rows > 0, events != 0) AND (part != 'reference' OR rank <= 10)
