-- Diagnosis profiles (SPEC §4.1): a tenant's own thresholds for the diagnosis, and where each applies
-- (identities: exact names or globs; inputs: session, otlp_logs, otlp_traces). The built-in profiles
-- (critiqor, long-session) are not stored; a row under a built-in name holds the tenant's rules for it.
-- Latest write wins (reads take the highest version of each name: sql/profiles_list.sql).
CREATE TABLE IF NOT EXISTS diagnosis_profiles {{on_cluster}}
(
    tenant           LowCardinality(String),
    name             String,
    tokens_high      UInt64,
    tokens_critical  UInt64,
    tokens_per_point UInt64,
    duplicates       UInt32,
    identities       Array(String),
    inputs           Array(LowCardinality(String)),
    version          UInt64
)
ENGINE = {{replicated}}ReplacingMergeTree(version)
ORDER BY (tenant, name);

-- The profile a run names itself (SPEC §3.1 `profile`; '' when it names none): its finalize, and a rebuild
-- that re-diagnoses it, judge it under that profile whatever the rules say.
ALTER TABLE runs {{on_cluster}} ADD COLUMN IF NOT EXISTS profile String DEFAULT '' AFTER content_hash;

-- The score the caller gave in its execution object (SPEC §6), NULL when the score is the diagnosis's
-- (trust / 100), so that a run re-diagnosed under another profile is classified again as its finalize
-- would classify it now. Runs stored before this column read a score that is not their trust / 100 as
-- the caller's (the one case where a caller's score cannot be told apart: one equal to trust / 100,
-- which classifies the same way unless the run is unsafe). The service always writes the column itself.
ALTER TABLE runs {{on_cluster}} ADD COLUMN IF NOT EXISTS caller_score Nullable(Float64) DEFAULT if(
    status = 'finalized' AND execution_status != 'execution_error'
        AND (trust_score IS NULL OR score != trust_score / 100),
    score, NULL) AFTER score;
