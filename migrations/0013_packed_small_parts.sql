-- On the embedded engine the parts the service writes small are Packed: all of a part's files in one
-- archive (data.packed) instead of about twelve (issue #14). Every INSERT writes a part and merges later
-- delete it: a single finalize created 73 files and deleted 75 (strace), and where creating a file is
-- dear (ext4 mounted without a journal walks the inodes freed in the last minutes to allocate one: README,
-- "This machine's disk") that churn doubled the server's CPU a run. With Packed parts a single run creates
-- 11, four of them the driver's insert spool in TMPDIR. `bench api`, alternating with main in one
-- directory (each run removing its store): main's single finalize p50 50.5 -> 78.1 -> 82.4 ms as the
-- directory filled with freed inodes (server CPU 71 -> 110 -> 115 ms a run), Packed 46.1, 48.7, 51.2 ms
-- (66, 65, 70 ms); on a quiet disk both are about 37 / 58 ms (p50 / p99). A part of 10 MiB or more
-- (uncompressed), the size from which the engine writes Wide parts by default, stays Full (a file per
-- stream), as do parts merged past it. Packed storage is open source since ClickHouse 26.7, older than the
-- embedded engine; a server is left as it is (there the lines marked embedded_only are comments): the
-- compose file runs 25.8.
{{embedded_only}}ALTER TABLE runs MODIFY SETTING min_bytes_for_full_part_storage = 10485760;
{{embedded_only}}ALTER TABLE run_events MODIFY SETTING min_bytes_for_full_part_storage = 10485760;
{{embedded_only}}ALTER TABLE run_failures MODIFY SETTING min_bytes_for_full_part_storage = 10485760;
{{embedded_only}}ALTER TABLE reputation_events MODIFY SETTING min_bytes_for_full_part_storage = 10485760;
{{embedded_only}}ALTER TABLE reputation_daily_sources MODIFY SETTING min_bytes_for_full_part_storage = 10485760;
{{embedded_only}}ALTER TABLE session_records MODIFY SETTING min_bytes_for_full_part_storage = 10485760;
{{embedded_only}}ALTER TABLE trace_spans MODIFY SETTING min_bytes_for_full_part_storage = 10485760;
