-- The trace-born runs of one tenant still open (SPEC §3.4 "A running agent is visible"): the runs of the traces
-- that received a span since {active_since} (a run is finalized once it settles or goes idle, so an open run's
-- spans are recent), each under the run id it has so far (sql/trace_runs.sql: its conversation id, the root
-- span's first, else the earliest span's that names one; else its trace id), that have no `runs` row (a
-- finalized run has one; so does a run opened through /v1/runs, which the runs list shows from it). Every
-- span of those traces counts, not only the recent ones. With the earliest and latest span start of each run
-- (unix nanoseconds), which bound the run times of the run and its child runs (each the earliest start of its
-- own spans): the runs list's time range, its page cursor (runs that start before {before_ns}) and the floor
-- below which a full page has no room for them ({*_ns}, NULL = none) filter on those bounds; the exact run
-- times come from mapping the spans (service.services.runs). The most recently started first, at most {limit}.
-- The runs are read by id, without their projections (service.store.runs.BY_RUN_ID).
WITH
    active AS
    (
        SELECT DISTINCT trace_id
        FROM spans
        WHERE tenant = {tenant:String} AND ingested_at >= {active_since:DateTime64(3, 'UTC')}
    ),
    traces AS
    (
        SELECT
            trace_id,
            argMinIf(conversation_id, tuple(NOT is_root, start_unix_nano, end_unix_nano, span_id), conversation_id != '')
                AS conversation,
            min(start_unix_nano) AS first_start,
            max(start_unix_nano) AS last_start
        FROM spans
        WHERE tenant = {tenant:String} AND trace_id IN active
        GROUP BY trace_id
    )
SELECT if(conversation = '', trace_id, conversation) AS run_id, min(first_start) AS first_start,
       max(last_start) AS last_start
FROM traces
GROUP BY run_id
HAVING run_id NOT IN (
        SELECT run_id FROM runs
        WHERE tenant = {tenant:String}
          AND run_id IN (SELECT if(conversation = '', trace_id, conversation) FROM traces)
    )
   AND ({since_ns:Nullable(UInt64)} IS NULL OR last_start >= {since_ns:Nullable(UInt64)})
   AND ({until_ns:Nullable(UInt64)} IS NULL OR first_start < {until_ns:Nullable(UInt64)})
   AND ({before_ns:Nullable(UInt64)} IS NULL OR first_start < {before_ns:Nullable(UInt64)})
   AND ({floor_ns:Nullable(UInt64)} IS NULL OR last_start >= {floor_ns:Nullable(UInt64)})
ORDER BY first_start DESC, run_id DESC
LIMIT {limit:UInt32}
SETTINGS optimize_use_projections = 0
