-- The runs list's filters on what no version of a run changes ('' = any).
({identity:String} = '' OR identity = {identity:String})
AND ({suite:String} = '' OR suite = {suite:String})
AND ({parent:String} = '' OR parent_run_id = {parent:String})
