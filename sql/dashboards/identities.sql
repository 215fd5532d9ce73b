-- Identities of the tenant with reputation evidence in the time range (the dashboards' identity variable).
SELECT DISTINCT identity
FROM reputation_daily_sources
WHERE tenant = {tenant:String}
  AND day BETWEEN toDate({since:DateTime64(3, 'UTC')}, 'UTC') AND toDate({until:DateTime64(3, 'UTC')}, 'UTC')
ORDER BY identity
