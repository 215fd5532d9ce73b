-- The sha256 of a run's events as canonical JSON (keys sorted), written when the run is finalized. A
-- whole run posted again under a stored run_id is compared by it, so a conflicting re-post is a 409 and
-- an identical one the stored result, without reading the run's events back (service/services/runs.py).
-- Runs finalized before this column existed read '' and are compared by identity and names only.
ALTER TABLE runs {{on_cluster}} ADD COLUMN IF NOT EXISTS content_hash String DEFAULT '' AFTER diagnosis_hash;
