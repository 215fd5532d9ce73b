// Small pieces shared by the pages: links between them, badges, trend arrows.

import { el } from "./dom.js";
import * as format from "./format.js";

export const runHref = (runId) => `#/runs/${encodeURIComponent(runId)}`;
export const identityHref = (identity) => `#/identities/${encodeURIComponent(identity)}`;
export const identityRunsHref = (identity) => `#/runs?${new URLSearchParams({ identity })}`;

export const readinessBadge = (level) =>
  el("span", { class: `badge ${format.readinessClass(level)}`, "data-field": "readiness" }, format.humanize(level));

/** An execution error where a verdict would stand: "execution error · setup / toolchain_missing". */
export const executionErrorBadge = (run) => {
  const where = format.executionErrorWhere(run);
  return el("span", { class: "badge execution-execution_error", "data-field": "execution-error" }, "execution error", where && ` · ${where}`);
};

export const severityBadge = (severity) => el("span", { class: `badge severity-${severity}` }, severity);

/** A trend in points with its arrow; the arrow is decoration, the signed number says it all. */
export function trendView(value, field) {
  const { arrow, text, direction } = format.trend(value);
  return el(
    "span",
    { class: `trend ${direction}` },
    arrow && el("span", { class: "arrow", "aria-hidden": "true" }, arrow),
    el("span", { "data-field": field }, text),
  );
}

/** A failure type in its colour. */
export const failureChip = (type) => el("span", { class: `chip slot-${format.failureSlot(type)}` }, format.humanize(type));
