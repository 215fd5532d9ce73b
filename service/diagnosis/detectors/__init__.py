"""The detector registry: Critiqor's six in SPEC §4's table order (`DETECTORS`), then those beyond
Critiqor (`ERROR_DETECTORS`, SPEC §4.2); `ALL_DETECTORS` is both.
Causes are listed, and the trust score's dimensions summed, in this order. Adding a failure type = one
module with a DETECTOR, plus one line here."""

from service.diagnosis.detectors import (
    context_pollution,
    cost_explosion,
    ignoring_tool_outputs,
    infinite_tool_loop,
    memory_degradation,
    skill_failure,
    tool_failures,
    unrecovered_error,
)
from service.diagnosis.detectors.base import CRITICAL, HIGH, MEDIUM, Detector, Finding

# Critiqor's own (SPEC §4's table): each lowers a dimension score; the profile `critiqor` runs these only.
DETECTORS: tuple[Detector, ...] = (
    infinite_tool_loop.DETECTOR,
    memory_degradation.DETECTOR,
    ignoring_tool_outputs.DETECTOR,
    context_pollution.DETECTOR,
    cost_explosion.DETECTOR,
    skill_failure.DETECTOR,
)
# Errors count (SPEC §4.2): no dimension, their impacts are taken off the trust score itself.
ERROR_DETECTORS: tuple[Detector, ...] = (
    unrecovered_error.DETECTOR,
    tool_failures.DETECTOR,
)
ALL_DETECTORS: tuple[Detector, ...] = DETECTORS + ERROR_DETECTORS
# The score dimensions (Critiqor's detectors') and every failure type, in the registry's order (the
# vocabulary's share of it).
DIMENSIONS: tuple[str, ...] = tuple(d.dimension for d in DETECTORS if d.dimension is not None)
FAILURE_TYPES: tuple[str, ...] = tuple(d.failure_type for d in ALL_DETECTORS)

__all__ = [
    "ALL_DETECTORS", "CRITICAL", "DETECTORS", "DIMENSIONS", "ERROR_DETECTORS", "FAILURE_TYPES", "HIGH",
    "MEDIUM", "Detector", "Finding",
]  # fmt: skip
