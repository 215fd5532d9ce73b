"""One run as plain text for people: its execution outcome first, then the diagnosis's trust verdict when
the run has one (`repute diagnose FILE --text`); a stored run (`repute runs show ID`) also says what and
whose it is, and the agents of a multi-agent run with each one's verdict.

An execution error is infrastructure, not the agent: its report names the stage, the reason and the
message, and shows no trust verdict (a setup that failed before the agent ran would otherwise read as
"trust 100/100 ready_for_runtime"). It lives outside `diagnosis/`, which knows nothing of outcomes.
"""

from collections.abc import Mapping
from typing import Any

from service.diagnosis.report import View, evidence_line, profile_line, verdict_lines
from service.outcome import UNKNOWN, ExecutionOutcome, ExecutionStatus, printable, three_decimals

NO_VERDICT = (
    "no trust verdict: the run failed for reasons that are not the agent's; it counts in no quality metric "
    "and no reputation"
)
TREE_BRANCH = "└ "  # a child run, under its parent


def run_text_report(diagnosis: View, outcome: ExecutionOutcome) -> str:
    """`diagnosis` is the diagnosis's JSON view (`Diagnosis.to_dict()`, or a stored run's `diagnosis`)."""
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


def stored_run_report(run: Mapping[str, Any]) -> str:
    """A run as `GET /v1/runs/{id}` answers it."""
    lines = [*_heading(run), ""]
    if run["diagnosis"] is None:
        lines.append("open: no verdict until the run is finalized")
        report = "\n".join(lines) + "\n"
    else:
        report = "\n".join(lines) + "\n" + run_text_report(run["diagnosis"], _outcome(run))
    return report + "\n".join(["", *_agent_tree(run)]) + "\n"


def _heading(run: Mapping[str, Any]) -> list[str]:
    named = (("suite", "suite"), ("task", "task_id"), ("trial", "trial"))
    grouped = ", ".join(f"{name} {printable(str(run[key]))}" for name, key in named if run[key] not in (None, ""))
    lines = [f"run {run['run_id']} of {run['identity']}" + (f" ({grouped})" if grouped else "")]
    lines.append(f"  {_span(run['started_at'], run['ended_at'])}, {run['event_count']} events, {run['status']}")
    performance = run["session_performance"]
    if performance:
        lines.append(
            f"  session performance {performance['composite']}/10, {performance['recommendation']} (docs/model.md)"
        )
    return lines


def _span(started: str | None, ended: str | None) -> str:
    if not started:
        return "no event time"
    start = started[:19].replace("T", " ")
    end = (ended or started)[:19].replace("T", " ")
    return f"{start} to {end[11:] if end[:10] == start[:10] else end} UTC"


def _outcome(run: Mapping[str, Any]) -> ExecutionOutcome:
    return ExecutionOutcome(
        ExecutionStatus(run["execution_status"]),
        run["score"],
        stage=run["failure_stage"] or None,
        reason_code=run["failure_reason_code"] or None,
        message=run["failure_message"] or None,
    )


def _agent_tree(run: Mapping[str, Any]) -> list[str]:
    """This run's agent and the agents it handed work to (a multi-agent run's child runs), each with its
    verdict; a child run names its parent."""
    if run["parent_run_id"]:
        return [f"agents: {run['identity']}, one agent of run {run['parent_run_id']} (repute runs show it for all)"]
    if not run["child_runs"]:
        return [f"agents: {run['identity']} alone"]
    lines = ["agents:", f"  {run['identity']}  {run['run_id']}  {_verdict(run)}"]
    children = run["child_runs"]
    return lines + [f"  {TREE_BRANCH}{child['identity']}  {child['run_id']}  {_verdict(child)}" for child in children]


def _verdict(run: Mapping[str, Any]) -> str:
    if run["execution_status"] == ExecutionStatus.EXECUTION_ERROR:
        return "execution error"
    if run["trust_score"] is None:
        return run["status"]
    return f"trust {run['trust_score']} {run['readiness_level']}"
