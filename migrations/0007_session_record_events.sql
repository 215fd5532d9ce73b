-- How many run events each OTLP log record maps to (SPEC §3.2: a tool_result is a tool_call and a
-- tool_output), so the receiver holds a session to the events-per-run cap on receipt. Rows stored
-- before this column count as 2, the most any record maps to: the cap is never overshot.
ALTER TABLE session_records {{on_cluster}} ADD COLUMN IF NOT EXISTS event_count UInt8 DEFAULT 2;
