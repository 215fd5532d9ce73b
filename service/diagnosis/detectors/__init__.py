"""The detector registry, in SPEC §4's table order: causes are listed, and the trust score's dimensions
summed, in this order. Adding a failure type = one module with a DETECTOR, plus one line here."""

from service.diagnosis.detectors import (
    context_pollution,
    cost_explosion,
    ignoring_tool_outputs,
    infinite_tool_loop,
    memory_degradation,
    skill_failure,
)
from service.diagnosis.detectors.base import CRITICAL, HIGH, MEDIUM, Detector, Finding

DETECTORS: tuple[Detector, ...] = (
    infinite_tool_loop.DETECTOR,
    memory_degradation.DETECTOR,
    ignoring_tool_outputs.DETECTOR,
    context_pollution.DETECTOR,
    cost_explosion.DETECTOR,
    skill_failure.DETECTOR,
)
# The score dimensions and the failure types, in the registry's order (the vocabulary's share of it).
DIMENSIONS: tuple[str, ...] = tuple(d.dimension for d in DETECTORS)
FAILURE_TYPES: tuple[str, ...] = tuple(d.failure_type for d in DETECTORS)

__all__ = ["CRITICAL", "DETECTORS", "DIMENSIONS", "FAILURE_TYPES", "HIGH", "MEDIUM", "Detector", "Finding"]
