-- The daily cap of posted signals counts per source, identity and UTC day of arrival (SPEC §7.1 "Time",
-- sql/source_counted_arrivals.sql), so that backdating a signal cannot multiply it. No column is added: a
-- row's arrival is its inserted_at, which every row has had since migration 0002 (DEFAULT now64(3), the
-- time of its insert; a posted signal's is now written as the time its request arrived). Rows stored
-- before this migration keep theirs, which is when they were stored: nothing is moved or rewritten.
--
-- The count reads one identity's rows that arrived on one day whatever their timestamps, and so in any
-- monthly partition (an admin's import may be years old): a minmax index on inserted_at lets it skip the
-- granules, and so the parts, written on other days. Parts written before this index read whole until
-- MATERIALIZE INDEX (a background mutation that only adds the index files) reaches them; a count is the
-- same either way.
ALTER TABLE reputation_events {{on_cluster}}
    ADD INDEX IF NOT EXISTS inserted_at_minmax inserted_at TYPE minmax GRANULARITY 1;

ALTER TABLE reputation_events {{on_cluster}} MATERIALIZE INDEX inserted_at_minmax;
