-- The reputation formula leaves the numbered migrations: the view reputation_at (0002, 0006, 0010) becomes a
-- repeatable definition, sql/definitions/reputation_at.sql, rendered from service/reputation/model.py and
-- re-created whenever its rendered text changes (service/store/definitions.py). This table records the checksum
-- of the text each definition was last created with; the runner applies definitions once it exists.
CREATE TABLE IF NOT EXISTS schema_definitions {{on_cluster}}
(
    name       String,
    checksum   String,
    applied_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = {{replicated}}ReplacingMergeTree(applied_at)
ORDER BY name;
