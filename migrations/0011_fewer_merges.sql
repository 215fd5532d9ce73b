-- Fewer merges of small parts on the tables every finalize writes to (issue #14). Each INSERT writes a
-- part; with the default merge_selector_base (5) the engine merged each small part of a single run into
-- the table's big part at once, so after a few batches every single finalize rewrote 100,000s of rows:
-- about 30 ms of engine CPU a run, competing with the requests for 2 cores. A base of 10 waits for
-- parts of similar size before merging them (less write amplification): the process's CPU a single
-- finalize fell from 73-88 to 50-56 ms (embedded engine, 200 runs after 4,000 batched; active parts
-- stayed at 2-4 a table). The setting exists since ClickHouse 24.11 (the compose file runs 25.8).
ALTER TABLE runs {{on_cluster}} MODIFY SETTING merge_selector_base = 10;
ALTER TABLE run_events {{on_cluster}} MODIFY SETTING merge_selector_base = 10;
ALTER TABLE run_failures {{on_cluster}} MODIFY SETTING merge_selector_base = 10;
ALTER TABLE reputation_events {{on_cluster}} MODIFY SETTING merge_selector_base = 10;
ALTER TABLE reputation_daily_sources {{on_cluster}} MODIFY SETTING merge_selector_base = 10;
