-- The fleet table's refresh becomes incremental (issue #42): the refreshable view of 0002 recomputed every
-- identity every minute (16-34 s for 100,000 identities over 100,000,000 events: `python -m bench scale`).
-- Its successor, sql/definitions/reputation_scores_mv.sql (a repeatable definition from here on, created
-- once this migration is applied), recomputes the identities whose reputation events or runs' figures were
-- written since its last refresh and keeps every other row as it was; every identity once a day (the
-- windows move with the day), and whenever a credibility, the half-life or a request below changed.
--
-- The view of 0002 goes first: a refresh of it under way would swap in a table of the old columns after the
-- ALTER below (a replacing refresh writes a new table and exchanges it). Its successor is created once the
-- migrations are applied, and the fleet table keeps its rows meanwhile.
DROP VIEW IF EXISTS reputation_scores_mv {{on_cluster}};

-- reputation_scores also keeps each identity's runs' figures over the reputation's window, computed at the
-- same refresh from identity_run_days (0022), so that the fleet list reads one table whatever it sorts by
-- (sorted by a runs' figure it read every run of the window: 2.8 s at 10,000,000 runs). Rows written
-- before read no runs until the first refresh, which recomputes every identity (the request below).
ALTER TABLE reputation_scores {{on_cluster}}
    ADD COLUMN IF NOT EXISTS runs UInt64 DEFAULT 0,
    ADD COLUMN IF NOT EXISTS execution_errors UInt64 DEFAULT 0,
    ADD COLUMN IF NOT EXISTS unsafe_runs UInt64 DEFAULT 0,
    ADD COLUMN IF NOT EXISTS last_run_at Nullable(DateTime64(3, 'UTC')),
    ADD COLUMN IF NOT EXISTS primary_failures Map(String, UInt64),
    ADD COLUMN IF NOT EXISTS primary_impacts Map(String, Int64);

-- A row here asks the next refresh to recompute every identity: the daily sums repaired after a crash
-- (service.store.reputation.repair_daily_sums), and this migration, whose new columns every row must get.
CREATE TABLE IF NOT EXISTS fleet_refresh_requests {{on_cluster}}
(
    requested_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = {{replicated}}MergeTree
ORDER BY requested_at
TTL toDateTime(requested_at) + INTERVAL 7 DAY;

INSERT INTO fleet_refresh_requests (requested_at) VALUES (now64(3));
