-- A tenant's own diagnosis profiles and their rules (SPEC §4.1), the latest version of each, by name.
SELECT name, tokens_high, tokens_critical, tokens_per_point, duplicates, detectors, identities, inputs
FROM diagnosis_profiles
WHERE tenant = {tenant:String}
ORDER BY name, version DESC
LIMIT 1 BY name
