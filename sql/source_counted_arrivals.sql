-- How many counted (not capped) events one source has stored per identity that arrived in one UTC day
-- (SPEC §7.1: the daily cap counts per source, identity and day of arrival, whatever the events'
-- timestamps). A signal's arrival is its inserted_at; the minmax index of migration 0014 skips the
-- parts and granules that arrived on other days.
SELECT identity, count() AS counted
FROM reputation_events
WHERE tenant = {tenant:String}
  AND identity IN {identities:Array(String)}
  AND inserted_at >= {start:DateTime64(3, 'UTC')}
  AND inserted_at < {end:DateTime64(3, 'UTC')}
  AND source = {source:String}
  AND capped = 0
GROUP BY identity
