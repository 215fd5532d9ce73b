-- Why one identity's reputation is what it is at as_of (SPEC §7.1 explain), weighed by the credibility of each
-- source and the decay as the reputation is (sql/definitions/reputation_at.sql), with the same placeholders
-- (service/reputation/model.py, service/store/definitions.py). One result of four parts:
--   event_type: per category, event type and window (offset_days 0: the window ending at as_of; the first trend
--               offset: the one ending that many days earlier), the counted events (not capped, credible),
--               Σδ·c·w, Σc·w and the type's own score;
--   category:   the same per category and window over all its types, and the category's score;
--   reference:  the references (runs, sessions, transactions ...) of the current window whose counted events
--               moved the score at least as much as the tenth one, by |Σδ·c·w|; a signal posted without a
--               reference counts under its event type (reference_id '', event_type set), so a failed payment
--               is listed beside the runs. Each with its Σδ·c·w per category (moved_by_category), from which
--               service.reputation.explain computes what it adds to the overall score (its points, which break
--               ties of |Σδ·c·w|) with the current window's category rows, and takes the top 10;
--   capped:     per source, the events of the current window stored over the daily cap.
-- The event types, categories and capped events come from the identity's daily sums per event type and
-- source (reputation_daily_types, migrations/0024), each day's sums weighed as the reputation weighs its daily
-- sums; the references from its raw events of the current window that count, each event weighed alone. One row
-- stream holds both (`by_reference` tells them apart), summed in one GROUPING SETS read, so a reference's
-- points take the categories' Σc·w from the category rows of the same read. A retraction (sign -1,
-- migrations/0010) takes its event out of every figure: the sums and counts are signed, and a type, category or
-- reference whose events were all retracted is left out.
WITH
    {{half_life_in_force}} AS half_life,
    arraySlice({{window_offsets}}, 1, 2) AS explained_offsets,
    {{reported_score}} AS reported_score,
    stored AS
    (
        -- per day, source, category and event type: the sums of the events that count, and the capped ones
        SELECT
            tenant, source, category, event_type, day, '' AS reference_type, '' AS reference_id, '' AS signal_type,
            sum(weighted_sum) AS weighted, sum(weight_sum) AS weighed_plain,
            sum(events) AS counted_events, sum(capped_events) AS capped_events, sum(capped_rows) AS capped_rows,
            false AS by_reference
        FROM reputation_daily_types
        WHERE tenant = {tenant:String} AND identity = {identity:String}
          AND day BETWEEN {as_of:Date} - (arrayMax(explained_offsets) + {{window_days}} - 1) AND {as_of:Date}
        GROUP BY tenant, source, category, event_type, day
        UNION ALL
        -- each event of the current window that counts, as the daily sums hold it (its Decimal, signed), the
        -- window as a range of timestamp, which the sort key and the monthly partitions prune by
        SELECT
            tenant, source, category, event_type, toDate(timestamp, 'UTC') AS day, reference_type, reference_id,
            if(reference_id = '', event_type, '') AS signal_type,
            toDecimal128(score_delta * confidence * weight, 18) * sign, toDecimal128(confidence * weight, 18) * sign,
            toInt64(sign), toInt64(0), toInt64(0), true
        FROM reputation_events
        WHERE tenant = {tenant:String} AND identity = {identity:String} AND capped = 0
          AND timestamp >= toDateTime64({as_of:Date} - ({{window_days}} - 1), 3, 'UTC')
          AND timestamp < toDateTime64({as_of:Date} + 1, 3, 'UTC')
    ),
    window_events AS
    (
        SELECT
            category,
            event_type,
            reference_type,
            reference_id,
            signal_type,
            source,
            by_reference,
            offset_days,
            {as_of:Date} - offset_days AS window_end,
            {{credibility}} AS credibility,
            toDecimal256(credibility * {{decay}}, 18) AS factor,
            weighted * factor AS moved,
            weighed_plain * factor AS weighed,
            credibility > 0 AS believed,
            NOT by_reference AND believed AS counted,
            by_reference AND believed AS referenced,
            NOT by_reference AND offset_days = 0 AS kept_out,
            counted_events,
            capped_events,
            capped_rows
        FROM stored
        {{credibilities_join}}
        ARRAY JOIN explained_offsets AS offset_days
        WHERE day BETWEEN window_end - ({{window_days}} - 1) AND window_end AND (NOT by_reference OR offset_days = 0)
    )
-- A reference's points (what it adds to the overall score: service.reputation.explain) and the ten references
-- shown are the service's; this read sends the references that can be among them: those whose |Σδ·c·w| is at
-- least the tenth largest, with its ties, which the points break.
SELECT part, category, named_type AS event_type, reference_type, reference_id, source, offset_days, events,
       weighted_delta, weight, score, moved_by_category
FROM
(
    SELECT
        *,
        part IN ('event_type', 'category') AS scored,
        if(part = 'reference', signal_type, event_type) AS named_type,
        multiIf(scored, counted_sum, part = 'reference', referenced_sum, capped_sum) AS events,
        multiIf(scored, moved_counted, part = 'reference', moved_referenced, 0.) AS weighted_delta,
        multiIf(scored, weighed_counted, part = 'reference', weighed_referenced, 0.) AS weight,
        if(scored, arrayMap(reported_score, [weighted_delta / nullIf(weight, 0)])[1], NULL) AS score,
        -- the tenth largest |Σδ·c·w| of the references with events (0 with fewer): one value a row, in one sort
        nth_value(abs(weighted_delta), 10) OVER (
            PARTITION BY part = 'reference' AND events != 0 ORDER BY abs(weighted_delta) DESC
            ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS tenth
    FROM
    (
        SELECT
            multiIf(grouping(event_type) = 0, 'event_type', grouping(offset_days) = 0, 'category',
                    grouping(reference_id) = 0, 'reference', 'capped') AS part,
            category, event_type, signal_type, reference_type, reference_id, source, offset_days,
            sumIf(counted_events, counted) AS counted_sum,
            sumIf(counted_events, referenced) AS referenced_sum,
            sumIf(capped_events, kept_out) AS capped_sum,
            toFloat64(sumIf(moved, counted)) AS moved_counted,
            toFloat64(sumIf(moved, referenced)) AS moved_referenced,
            toFloat64(sumIf(weighed, counted)) AS weighed_counted,
            toFloat64(sumIf(weighed, referenced)) AS weighed_referenced,
            mapApply((c, m) -> (c, toFloat64(m)), sumMapIf(map(category, moved), referenced))
                AS moved_by_category,
            sumIf(capped_rows, kept_out) AS capped_rows
        FROM window_events
        GROUP BY GROUPING SETS (
            (category, event_type, offset_days), (category, offset_days),
            (reference_type, reference_id, signal_type), (source))
    )
)
WHERE if(part = 'capped', capped_rows > 0, events != 0) AND (part != 'reference' OR abs(weighted_delta) >= tenth)
