"""One run as plain text for people (`repute diagnose FILE --text`): its execution outcome (SPEC §6)
first, then the diagnosis's trust verdict (SPEC §4) when the run has one.

An execution error is infrastructure, not the agent: its report names the stage, the reason and the
message, and shows no trust verdict (a setup that failed before the agent ran would otherwise read as
"trust 100/100 ready_for_runtime"). It lives outside `diagnosis/`, which knows nothing of outcomes.
"""

from service.diagnosis import Diagnosis
from service.diagnosis.report import evidence_line, profile_line, verdict_lines
from service.outcome import UNKNOWN, ExecutionOutcome, ExecutionStatus, printable, three_decimals

NO_VERDICT = (
    "no trust verdict: the run failed for reasons that are not the agent's; it counts in no quality metric "
    "and no reputation"
)


def run_text_report(diagnosis: Diagnosis, outcome: ExecutionOutcome) -> str:
    if outcome.status == ExecutionStatus.EXECUTION_ERROR:
        lines = [
            f"outcome: {outcome.status} at stage {outcome.stage or UNKNOWN}, reason {outcome.reason_code or UNKNOWN}"
        ]
        if outcome.message:
            lines.append(f"  message: {printable(outcome.message)}")
        lines += [NO_VERDICT, evidence_line(diagnosis), profile_line(diagnosis)]
    else:
        lines = [
            f"outcome: {outcome.status} (score {three_decimals(outcome.score)})",
            *verdict_lines(diagnosis),
            evidence_line(diagnosis),
            profile_line(diagnosis),
        ]
    return "\n".join(lines) + "\n"
