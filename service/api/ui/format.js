// How numbers, times and names read on the page. Missing values read as an em dash.

export const MISSING = "—";

import { FAILURE_TYPES, READINESS_LEVELS, READY_TRUST, UNSAFE_TRUST_BELOW } from "./vocab.js";

export { CATEGORIES, DIMENSIONS, EXECUTION_STATUSES, FAILURE_TYPES, READINESS_LEVELS, RUN_KINDS } from "./vocab.js";

// The session performance report (SPEC §5) in the judge's order.
export const PERFORMANCE_DIMENSIONS = ["quality", "autonomy", "productivity", "token_efficiency", "cost_efficiency"];
export const PERFORMANCE_STATS = [
  ["total_cost", "Total cost (USD)"], ["total_tools", "Tool calls"], ["tools_ok", "Tool calls ok"],
  ["tool_success_pct", "Tool success (%)"], ["prompts", "Prompts"], ["total_tokens", "Tokens"],
  ["cache_tokens", "Cache tokens"],
];

/** "ready_for_runtime" -> "ready for runtime" */
export const humanize = (name) => (name ? String(name).replaceAll("_", " ") : MISSING);

/** "identity_hygiene" -> "Identity hygiene", for headings and labels. */
export const title = (name) => {
  const words = humanize(name);
  return words.charAt(0).toUpperCase() + words.slice(1);
};

/** A 0..100 score with one decimal. */
export const score = (value) => (value === null || value === undefined ? MISSING : Number(value).toFixed(1));

export const percent = (fraction) => `${Math.round(100 * fraction)}%`;

/** Any measured value: at most two decimals. */
export const number = (value) =>
  value === null || value === undefined ? MISSING : Number(value).toLocaleString("en", { maximumFractionDigits: 2 });

/** A length of time in milliseconds: "850 ms", "12.4 s", "3 min 5 s". */
export function duration(milliseconds) {
  if (milliseconds === null || milliseconds === undefined) return MISSING;
  if (milliseconds < 1000) return `${Math.round(milliseconds)} ms`;
  const seconds = milliseconds / 1000;
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  return `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
}

/** The API's duration_seconds as duration() reads it. */
export const seconds = (value) => (value === null || value === undefined ? MISSING : duration(1000 * value));

/** US dollars: cents, and up to four decimals under a dollar ("$0.0125"), where model calls cost fractions of a cent. */
export const dollars = (value) =>
  value === null || value === undefined ? MISSING
    : `$${Number(value).toLocaleString("en", { minimumFractionDigits: 2, maximumFractionDigits: Math.abs(value) < 1 ? 4 : 2 })}`;

export const integer = (value) => (value === null || value === undefined ? MISSING : Number(value).toLocaleString("en"));

/** An ISO time as "2026-11-20 11:00:07 UTC". */
export const time = (iso) => (iso ? `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC` : MISSING);

/** An ISO time to the minute, where a heading says UTC: "2026-11-20 11:00". */
export const minute = (iso) => `${iso.slice(0, 10)} ${iso.slice(11, 16)}`;

/** A trend in points: arrow, signed text and direction ("up", "down", "flat", "none"). */
export function trend(value) {
  if (value === null || value === undefined) return { arrow: "", text: MISSING, direction: "none" };
  const rounded = Number(value).toFixed(1);
  if (Number(rounded) > 0) return { arrow: "▲", text: `+${rounded}`, direction: "up" };
  if (Number(rounded) < 0) return { arrow: "▼", text: rounded, direction: "down" };
  return { arrow: "▶", text: "0.0", direction: "flat" };
}

/** The readiness band a trust score falls in (the chart's bands). */
export const trustBand = (trust) => (trust >= READY_TRUST ? "ready" : trust >= UNSAFE_TRUST_BELOW ? "review" : "unsafe");

/** CSS class of a readiness level: ready, review or unsafe. */
const READINESS_CLASSES = ["ready", "review", "unsafe"]; // in READINESS_LEVELS' order, best first
export const readinessClass = (level) => READINESS_CLASSES[READINESS_LEVELS.indexOf(level)] ?? "none";

/**
 * Why a run's readiness is worse than its trust band, or null when they agree. The rule (SPEC §4): a
 * critical cause makes a run unsafe and a high one makes it review, whatever its trust.
 */
export function belowBandReason(trust, level) {
  const band = READINESS_CLASSES.indexOf(trustBand(trust));
  const verdict = READINESS_CLASSES.indexOf(readinessClass(level));
  if (verdict <= band) return null;
  return verdict === 2 ? "a critical-severity cause makes it unsafe" : "a high-severity cause makes it review";
}

/** A run that stopped on its infrastructure: it has no quality verdict. */
export const isExecutionError = (run) => run.execution_status === "execution_error";

/** "setup / toolchain_missing", or "" when the run names neither. */
export const executionErrorWhere = (run) => [run.failure_stage, run.failure_reason_code].filter(Boolean).join(" / ");

/** One stable colour slot (0..5) per failure type, shared by the graph, chips and evidence rows. */
export const failureSlot = (type) => {
  const known = FAILURE_TYPES.indexOf(type);
  return known >= 0 ? known : [...String(type)].reduce((sum, c) => sum + c.charCodeAt(0), 0) % FAILURE_TYPES.length;
};
