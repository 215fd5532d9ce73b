// A trace-born run's spans as a waterfall (GET /v1/runs/{id}/spans): one row per span in run order, its name
// indented by depth, its agent and role, a bar placed at its start and as long as it lasted on the run's
// time scale, its error, and the model's messages where the trace carries them (as stored: redacted).

import { dataTable, el } from "./dom.js";
import * as format from "./format.js";
import { runHref } from "./widgets.js";

const MIN_BAR_PERCENT = 0.4; // a span of no length stays visible

function waterfallBar(span, scale) {
  const fill = el("span", { class: `span-bar ${span.error ? "failed" : `role-${span.role ?? "other"}`}` });
  fill.style.left = `${(100 * span.offset_ms) / scale}%`;
  fill.style.width = `${Math.max(MIN_BAR_PERCENT, (100 * span.duration_ms) / scale)}%`;
  return el("span", { class: "span-track", "aria-hidden": "true" }, fill);
}

const messageList = (side, messages) =>
  el("div", { class: "messages" }, el("h4", {}, side),
    messages.length === 0 ? el("p", { class: "empty" }, "none")
      : messages.map(({ role, content }) => el("div", { class: "message" }, el("span", { class: "message-role" }, role), el("pre", {}, content))));

function spanMessages(messages) {
  if (!messages) return null;
  return el("details", { class: "span-messages", "data-field": "span-messages" },
    el("summary", {}, `Messages: ${messages.input.length} in, ${messages.output.length} out`),
    messageList("Input", messages.input), messageList("Output", messages.output),
    messages.truncated && el("p", { class: "hint" }, "Cut: a message was longer, or a side held more, than is kept."));
}

function spanName(span, runId) {
  const name = el("span", { class: "span-name" }, span.name);
  name.style.paddingLeft = `${span.depth * 0.9}rem`;
  const otherRun = span.run_id !== runId && el("a", { href: runHref(span.run_id), class: "run-link span-run" }, "its run");
  return [name, otherRun && [" ", otherRun]];
}

function spanRow(span, scale, runId) {
  const error = span.error && [span.error.error, span.error.message && `: ${span.error.message}`, span.error.fatal && " (fatal)"];
  const usage = span.usage && `${format.integer(span.usage.total_tokens)} tokens${span.usage.model ? ` · ${span.usage.model}` : ""}`;
  return el(
    "tr",
    { "data-span-id": span.span_id, class: span.error ? "span-failed" : null },
    el("td", {}, spanName(span, runId), spanMessages(span.messages)),
    el("td", { "data-field": "span-agent" }, span.agent ?? format.MISSING),
    el("td", { "data-field": "span-role" }, span.role ?? format.MISSING),
    el("td", { class: "waterfall" }, waterfallBar(span, scale)),
    el("td", { class: "number nowrap", "data-field": "span-duration" }, format.duration(span.duration_ms)),
    el("td", {}, [span.tool_call?.tool, usage].filter(Boolean).join(" · ") || format.MISSING),
    el("td", { "data-field": "span-error" }, error || ""),
  );
}

export function renderTimeline(region, { spans, total }, runId) {
  if (spans.length === 0) {
    region.append(el("p", { class: "empty" }, "Its spans are no longer kept (past their TTL); its events remain below."));
    return;
  }
  const scale = Math.max(1, ...spans.map((span) => span.offset_ms + span.duration_ms));
  if (spans.length < total) {
    region.append(el("p", { class: "hint" }, `Showing the first ${format.integer(spans.length)} of ${format.integer(total)} spans.`));
  }
  region.append(
    el("p", { class: "hint" }, `${format.integer(total)} spans over ${format.duration(scale)}; each bar starts when its span did.`),
    dataTable("spans", ["Span", "Agent", "Role", "Timeline", "Duration", "Tool / usage", "Error"],
      spans.map((span) => spanRow(span, scale, runId)), ["Duration"]),
  );
}
