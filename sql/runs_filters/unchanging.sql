-- The runs list's filters on what no version of a run changes ('' = any); `q` finds runs whose identity or
-- run id holds it, in any case.
({identity:String} = '' OR identity = {identity:String})
AND ({suite:String} = '' OR suite = {suite:String})
AND ({parent:String} = '' OR parent_run_id = {parent:String})
AND ({q:String} = '' OR positionCaseInsensitiveUTF8(identity, {q:String}) > 0
     OR positionCaseInsensitiveUTF8(run_id, {q:String}) > 0)
