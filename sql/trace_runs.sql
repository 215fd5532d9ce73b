-- The stored traces of trace-born runs, one row per trace: the run it belongs to (SPEC §3.4: its
-- conversation id, the root span's first, else the earliest span's that names one, in the mapping's
-- order of start, end and span id; else the trace id), the rank of the span that named it (to weigh
-- against spans not stored yet), whether its root arrived, when it last received a span, and its spans.
-- For one tenant's traces, or ('' and []) every tenant's.
SELECT
    tenant,
    trace_id,
    argMinIf(conversation_id, rank, conversation_id != '') AS conversation,
    minIf(rank, conversation_id != '') AS conversation_rank,
    max(is_root) AS rooted,
    max(ingested_at) AS last_seen,
    uniqExact(span_key) AS span_count
FROM
(
    SELECT tenant, trace_id, conversation_id, is_root, ingested_at, span_key,
           tuple(NOT is_root, start_unix_nano, end_unix_nano, span_id) AS rank
    FROM spans
    WHERE ({tenant:String} = '' OR tenant = {tenant:String})
      AND (empty({traces:Array(String)}) OR trace_id IN {traces:Array(String)})
)
GROUP BY tenant, trace_id
ORDER BY tenant, trace_id
