-- The runs list's time range and the page's keyset cursor on (run_at, run_id) (NULL = none).
({since:Nullable(DateTime64(3, 'UTC'))} IS NULL OR run_at >= {since:Nullable(DateTime64(3, 'UTC'))})
AND ({until:Nullable(DateTime64(3, 'UTC'))} IS NULL OR run_at < {until:Nullable(DateTime64(3, 'UTC'))})
AND ({after_at:Nullable(DateTime64(3, 'UTC'))} IS NULL
     OR (run_at, run_id) < ({after_at:Nullable(DateTime64(3, 'UTC'))}, {after_id:String}))
