// How numbers, times and names read on the page. Missing values read as an em dash.

export const MISSING = "—";

export const READINESS_LEVELS = ["ready_for_runtime", "review_recommended", "unsafe_for_production"];
export const EXECUTION_STATUSES = ["ok", "quality_failure", "execution_error"];
export const FAILURE_TYPES = [
  "infinite_tool_loop", "memory_degradation", "ignoring_tool_outputs",
  "context_pollution", "cost_explosion", "skill_failure",
];
export const DIMENSIONS = [
  "loop_control", "memory_integrity", "tool_output_utilization",
  "context_health", "cost_efficiency", "skill_adherence",
];

// The session performance report (SPEC §5) in the judge's order.
export const PERFORMANCE_DIMENSIONS = ["quality", "autonomy", "productivity", "token_efficiency", "cost_efficiency"];
export const PERFORMANCE_STATS = [
  ["total_cost", "Total cost (USD)"], ["total_tools", "Tool calls"], ["tools_ok", "Tool calls ok"],
  ["tool_success_pct", "Tool success (%)"], ["prompts", "Prompts"], ["total_tokens", "Tokens"],
  ["cache_tokens", "Cache tokens"],
];

/** "ready_for_runtime" -> "ready for runtime" */
export const humanize = (name) => (name ? String(name).replaceAll("_", " ") : MISSING);

/** A 0..100 score with one decimal. */
export const score = (value) => (value === null || value === undefined ? MISSING : Number(value).toFixed(1));

export const percent = (fraction) => `${Math.round(100 * fraction)}%`;

/** Any measured value: at most two decimals. */
export const number = (value) =>
  value === null || value === undefined ? MISSING : Number(value).toLocaleString("en", { maximumFractionDigits: 2 });

export const integer = (value) => (value === null || value === undefined ? MISSING : Number(value).toLocaleString("en"));

/** An ISO time as "2026-11-20 11:00:07 UTC". */
export const time = (iso) => (iso ? `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC` : MISSING);

/** A trend in points: arrow, signed text and direction ("up", "down", "flat", "none"). */
export function trend(value) {
  if (value === null || value === undefined) return { arrow: "", text: MISSING, direction: "none" };
  const rounded = Number(value).toFixed(1);
  if (Number(rounded) > 0) return { arrow: "▲", text: `+${rounded}`, direction: "up" };
  if (Number(rounded) < 0) return { arrow: "▼", text: rounded, direction: "down" };
  return { arrow: "▶", text: "0.0", direction: "flat" };
}

/** The readiness band a trust score falls in (the chart's bands). */
export const trustBand = (trust) => (trust >= 80 ? "ready" : trust >= 60 ? "review" : "unsafe");

/** CSS class of a readiness level: ready, review or unsafe. */
export const readinessClass = (level) =>
  ({ ready_for_runtime: "ready", review_recommended: "review", unsafe_for_production: "unsafe" })[level] ?? "none";

/** One stable colour slot (0..5) per failure type, shared by the graph, chips and evidence rows. */
export const failureSlot = (type) => {
  const known = FAILURE_TYPES.indexOf(type);
  return known >= 0 ? known : [...String(type)].reduce((sum, c) => sum + c.charCodeAt(0), 0) % FAILURE_TYPES.length;
};
