-- An identity's overall reputation fell by at least min_drop points against 7 days earlier, with enough
-- evidence behind it (confidence >= min_confidence). Both scores come from the reputation_at view, so
-- the alert agrees with the reputation API for the same day.
SELECT
    'identity_score_drop' AS alert,
    'warning' AS severity,
    identity AS subject,
    assumeNotNull(overall) AS value,
    score_7d_ago AS baseline,
    concat(
        identity, ': reputation ', toString(round(overall, 1)), ', down ',
        toString(round(score_7d_ago - overall, 1)), ' points from ', toString(round(score_7d_ago, 1)),
        ' 7 days ago (confidence ', toString(round(confidence, 2)), ')'
    ) AS message
FROM reputation_at(as_of = toDate({now:DateTime64(3, 'UTC')}, 'UTC'))
WHERE tenant = {tenant:String}
  AND confidence >= {min_confidence:Float64}
  AND score_7d_ago - overall >= {min_drop:Float64}
ORDER BY subject
