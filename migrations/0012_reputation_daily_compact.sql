-- reputation_daily_sources keeps every part Compact (all columns in one file, one marks file) instead of
-- Wide (a file and marks per column) past 10 MiB, the default. Each of its readers reads the rows of one
-- identity, or of every identity, with all their columns (sql/identity_daily_sources.sql, the view
-- reputation_at), and one identity's read opens each part of the 120 days it spans: with Wide parts that
-- is a file, marks and a compressed block per column and part. Measured on the store benchmark's
-- 10,000,000 events (five parts in the current year): the identity's rows cost the engine 12.8 ms on Wide
-- parts, 9.9 ms on Compact ones. Parts written from now on, merges included, are Compact; a Wide part
-- stays Wide until a merge rewrites it.
ALTER TABLE reputation_daily_sources {{on_cluster}} MODIFY SETTING min_bytes_for_wide_part = 1099511627776;
