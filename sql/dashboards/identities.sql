-- Identities of the tenant with reputation evidence in the time range (the dashboards' identity variable).
SELECT identity
FROM reputation_daily_types
WHERE tenant = {tenant:String}
  AND day BETWEEN toDate({since:DateTime64(3, 'UTC')}, 'UTC') AND toDate({until:DateTime64(3, 'UTC')}, 'UTC')
GROUP BY identity
HAVING sum(counted_rows) != 0
ORDER BY identity
