"""CI/CD gates: pass or fail a run (offline from a file, or stored) and a suite's execution-error rate."""

from dataclasses import dataclass
from typing import Any

from service.diagnosis import built_in_profile, diagnose, parse_run
from service.diagnosis.report import unsafe_reason
from service.outcome import classify_execution
from service.vocab import Readiness


@dataclass(frozen=True)
class GateResult:
    passed: bool
    message: str


def verdict_of_file(data: bytes, pass_threshold: float) -> dict[str, Any]:
    """The fields a gate reads, for a session file diagnosed offline (under the built-in profile it names,
    else `critiqor`)."""
    run = parse_run(data)
    view = diagnose(run.events, built_in_profile(run.profile)).to_dict()
    outcome = classify_execution(
        run.execution, run.events, view["trust_score"], pass_threshold, readiness=view["readiness_level"]
    )
    return {
        "run_id": run.run_id or "(file)",
        "trust_score": view["trust_score"],
        "readiness_level": view["readiness_level"],
        "execution_status": str(outcome.status),
        "failure_stage": outcome.stage or "",
        "failure_reason_code": outcome.reason_code or "",
        "diagnosis": view,
    }


def gate_run(run: dict[str, Any], min_trust: int, allow_review: bool) -> GateResult:
    name = run["run_id"]
    if run["execution_status"] == "execution_error":
        where = "/".join(p for p in (run["failure_stage"], run["failure_reason_code"]) if p) or "unknown"
        return GateResult(False, f"FAIL {name}: execution error ({where}); the run produced no quality verdict")
    trust, readiness = run["trust_score"], run["readiness_level"]
    if trust is None:
        return GateResult(False, f"FAIL {name}: the run is not finalized")
    summary = f"trust {trust}, {readiness}"
    if readiness == Readiness.UNSAFE:
        causes = [
            (cause["type"], cause["severity"]) for cause in (run.get("diagnosis") or {}).get("failure_causes", [])
        ]
        why = unsafe_reason(trust, readiness, causes)
        return GateResult(False, f"FAIL {name}: {summary}" + (f"; {why}" if why else ""))
    if trust < min_trust:
        return GateResult(False, f"FAIL {name}: {summary}; trust is under {min_trust}")
    if readiness == Readiness.REVIEW and not allow_review:
        return GateResult(False, f"FAIL {name}: {summary} (pass --allow-review to accept)")
    return GateResult(True, f"PASS {name}: {summary}")


def gate_suite_errors(summary: dict[str, Any], max_rate: float) -> GateResult:
    total, errors = summary["total"], summary["execution_errors"]
    rate = errors / total if total else 0.0
    text = f"suite {summary['suite']}: {errors}/{total} tasks are execution errors ({rate:.1%})"
    if rate > max_rate:
        return GateResult(False, f"FAIL {text}; the limit is {max_rate:.1%}")
    return GateResult(True, f"PASS {text}")
