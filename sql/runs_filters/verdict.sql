-- The runs list's filters on what a run's versions change ('' = any). An execution error has no quality
-- verdict, so the readiness and primary-failure filters never match one.
({readiness:String} = '' OR (readiness = {readiness:String} AND execution_status != 'execution_error'))
AND ({execution_status:String} = '' OR execution_status = {execution_status:String})
AND ({primary_failure:String} = ''
     OR (primary_failure = {primary_failure:String} AND execution_status != 'execution_error'))
AND ({status:String} = '' OR status = {status:String})
