-- API keys: only a hash of the secret is stored. Revocation writes a new version.
CREATE TABLE IF NOT EXISTS api_keys {{on_cluster}}
(
    tenant     LowCardinality(String),
    key_id     String,
    version    UInt64,
    name       String,
    scopes     Array(LowCardinality(String)),
    key_hash   String,
    created_at DateTime64(3, 'UTC'),
    revoked_at Nullable(DateTime64(3, 'UTC'))
)
ENGINE = {{replicated}}ReplacingMergeTree(version)
ORDER BY (tenant, key_id);
