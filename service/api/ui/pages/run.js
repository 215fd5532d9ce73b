// Run detail: what went wrong (summary, the profile that judged it, causal chain, remediation, scores,
// failures), the causal graph, and every event with the evidence of each failure highlighted and linked
// both ways. An open
// run says once that it has no diagnosis yet; an execution error leads with its stage, reason and
// message and shows no quality verdict; only an OpenTelemetry session has a performance card.

import { getRun, runEvents, runSpans } from "../api.js";
import { bar, dataTable, el, errorBox, facts, fillAll, section } from "../dom.js";
import * as format from "../format.js";
import { causalGraph, failureTypesByEvent } from "../graph.js";
import { renderTimeline } from "../timeline.js";
import { executionErrorBadge, failureChip, identityHref, identityRunsHref, readinessBadge, runHref, severityBadge } from "../widgets.js";

const DETAILS_INLINE_CHARS = 160;
const OPEN_REFRESH_MS = 3000; // how often an open run's page asks whether it grew
const EVENT_KEYS_IN_COLUMNS = new Set(["event", "type", "event_id", "timestamp"]);

const eventRowId = (nodeId) => `event-row-${nodeId}`;
const failureCardId = (type) => `failure-${type}`;

/** Moves the keyboard focus (and the view) to an element rendered elsewhere on the page. */
function jumpTo(id) {
  const target = document.getElementById(id);
  if (!target) return;
  target.scrollIntoView({ block: "center" });
  target.focus({ preventScroll: true });
  target.classList.remove("flash");
  requestAnimationFrame(() => target.classList.add("flash"));
}

const primaryCause = (run) => run.diagnosis.failure_causes.find((cause) => cause.type === run.primary_failure);
const chainSteps = (chain) => chain.split(" -> ");
/**
 * With no failure the primary diagnosis explains that nothing was detected, in the words of Critiqor's
 * diagnosis ("No OpenClaw failure mode was detected ..."), which name the taxonomy they come from: said here
 * what that is.
 */
const nothingDetected = (run) => [
  el("p", {}, run.diagnosis.primary_diagnosis.causal_chain_explanation),
  el("p", { class: "hint", "data-field": "openclaw" },
    "OpenClaw is the taxonomy of agent failure modes that Critiqor's diagnosis, and so Repute's, comes from. ",
    "Repute looks for six of them in a run's events: ", format.FAILURE_TYPES.map(format.humanize).join(", "), "."),
];

/** The diagnosis profile that judged the run and its thresholds (SPEC §4.1), in one line. */
const profileLine = ({ name, tokens_high, tokens_critical, tokens_per_point, duplicates }) =>
  `${name}: cost explosion from ${format.integer(tokens_high)} tokens (critical from ${format.integer(tokens_critical)}, ` +
  `one impact point per ${format.integer(tokens_per_point)}) or ${duplicates} duplicate calls`;

function renderSummary(region, run) {
  const primary = primaryCause(run);
  region.append(
    el(
      "div",
      { class: "headline" },
      el("p", { class: `trust-big ${format.readinessClass(run.readiness_level)}` },
        el("span", { "data-field": "trust" }, run.trust_score ?? format.MISSING), el("span", { class: "out-of" }, " / 100 trust")),
      readinessBadge(run.readiness_level),
    ),
    facts([
      ["Primary failure", primary ? [failureChip(primary.type), " ", severityBadge(primary.severity), ` impact ${primary.impact_score}`] : "none", "primary-failure"],
      ["Summary", run.diagnosis.executive_summary.summary, "summary"],
      ["Judged under", profileLine(run.profile), "profile"],
    ]),
  );
}

function renderRunFacts(region, run) {
  region.append(
    facts([
      ["Identity", [el("a", { href: identityHref(run.identity), class: "identity-link" }, run.identity), " · ",
        el("a", { href: identityRunsHref(run.identity) }, "its runs")], "identity"],
      ["Suite / task / trial", [run.suite, run.task_id, run.trial ?? ""].filter((part) => part !== "").join(" / ") || format.MISSING],
      ["Kind", run.kind],
      ["Started", format.time(run.started_at)],
      ["Ended", format.time(run.ended_at)],
      ["Duration", format.seconds(run.duration_seconds), "duration"],
      ["Events", format.integer(run.event_count), "event-count"],
      ["Tool calls", format.integer(run.tool_calls)],
      ["Tokens", format.integer(run.total_tokens)],
      ["Cost", format.dollars(run.cost_usd), "cost"],
    ]),
  );
}

/** A run's verdict in a few words: its readiness and trust, or its execution error, or that it is open. */
function verdictOf(run) {
  if (run.status !== "finalized") return el("span", { class: "badge" }, "open");
  if (run.execution_status === "execution_error") return el("span", { class: "badge execution-execution_error" }, "execution error");
  return [readinessBadge(run.readiness_level), ` ${run.trust_score ?? format.MISSING} trust`];
}

/** The agents of a multi-agent run (SPEC §3.5): the run it is part of, and each agent's own run with its
 * verdict, linked both ways. */
function renderAgents(region, run) {
  const agent = (child, current) =>
    el("li", { class: current ? "agent current" : "agent", "data-run": child.run_id },
      el("a", { href: identityHref(child.identity), class: "identity-link" }, child.identity), " · ",
      current ? el("strong", {}, "this run") : el("a", { href: runHref(child.run_id), class: "run-link" }, child.run_id), " · ",
      verdictOf(child));
  if (run.parent_run_id) {
    region.append(el("p", { "data-field": "parent-run" }, "Part of the multi-agent run ",
      el("a", { href: runHref(run.parent_run_id), class: "run-link" }, run.parent_run_id),
      ": this agent's reputation comes from its own spans only."));
  }
  if (run.child_runs.length) {
    region.append(el("p", {}, "Each agent this run handed work to has a run of its own, judged on its own work:"),
      el("ul", { class: "agent-tree", "data-field": "agent-tree" },
        agent(run, true), el("li", {}, el("ul", {}, ...run.child_runs.map((child) => agent(child, false))))));
  }
}

function renderOutcome(region, run) {
  region.append(
    facts([
      ["Execution status", el("span", { class: `badge execution-${run.execution_status}` }, format.humanize(run.execution_status || run.status)), "execution-status"],
      ["Score", run.status === "finalized" ? run.score.toFixed(2) : format.MISSING, "score"],
    ]),
  );
}

function renderExecutionError(region, run) {
  region.append(
    el("p", { class: "lead-error" },
      "This run stopped on its infrastructure, not on the agent: it has no trust verdict, and it is left out of every quality metric and of reputation."),
    facts([
      ["Execution status", executionErrorBadge(run), "execution-status"],
      ["Stage", run.failure_stage || format.MISSING, "failure-stage"],
      ["Reason", run.failure_reason_code || format.MISSING, "failure-reason-code"],
      ["Message", run.failure_message || format.MISSING, "failure-message"],
      ["Trust", "none: no quality verdict", "trust"],
    ]),
  );
}

function renderChain(region, run) {
  const primary = primaryCause(run);
  if (!primary) {
    region.append(...nothingDetected(run));
    return;
  }
  region.append(
    el("p", {}, failureChip(primary.type), " ", primary.description),
    el("ol", { class: "chain", "aria-label": `Causal chain of ${format.humanize(primary.type)}` },
      chainSteps(primary.causal_chain).map((step) => el("li", {}, format.humanize(step)))),
  );
}

function renderRemediation(region, run) {
  const causes = run.diagnosis.failure_causes;
  if (causes.length === 0) {
    region.append(el("p", {}, "Nothing to remediate: no failure was detected."));
    return;
  }
  const primary = primaryCause(run);
  region.append(
    el("p", { class: "remediation-primary" }, el("strong", {}, "First: "), primary.remediation),
    causes.length > 1 &&
      el("ul", { class: "remediation-others" },
        causes.filter((cause) => cause !== primary).map((cause) => el("li", {}, failureChip(cause.type), " ", cause.remediation))),
  );
}

function renderScores(region, run) {
  const { scores } = run.diagnosis;
  region.append(
    el("div", { class: "bars" },
      format.DIMENSIONS.map((name) => bar(format.humanize(name), scores[name], 100, { field: `score-${name}`, className: format.trustBand(scores[name]) }))),
  );
}

function renderFailures(region, run) {
  const causes = run.diagnosis.failure_causes;
  if (causes.length === 0) {
    region.append(el("p", { class: "empty" }, "No failure was detected."));
    return;
  }
  region.append(
    el("div", { class: "failure-cards" }, causes.map((cause) =>
      el(
        "article",
        { id: failureCardId(cause.type), tabindex: "-1", class: `failure-card slot-${format.failureSlot(cause.type)}` },
        el("h3", {}, format.humanize(cause.type), " ", severityBadge(cause.severity), " ",
          el("span", { class: "impact" }, `impact ${cause.impact_score}`)),
        el("p", {}, cause.description),
        el("p", { class: "chain-inline" }, chainSteps(cause.causal_chain).map(format.humanize).join(" → ")),
        el("p", { class: "evidence-links" }, `Evidence (${cause.evidence.length}): `,
          cause.evidence.map((eventId) =>
            el("button", { type: "button", class: "link-button", onclick: () => jumpTo(eventRowId(eventId)), "aria-label": `Show evidence event ${eventId}` }, eventId))),
      ))),
  );
}

function renderPerformance(region, run) {
  const performance = run.session_performance;
  region.append(
    el("div", { class: "headline" },
      el("p", { class: "trust-big" }, el("span", { "data-field": "composite" }, performance.composite.toFixed(1)), el("span", { class: "out-of" }, " / 10 composite")),
      el("span", { class: `badge recommendation-${performance.recommendation}` }, performance.recommendation)),
    el("div", { class: "bars" },
      format.PERFORMANCE_DIMENSIONS.map((name) => {
        const value = performance.dimensions[name];
        return bar(format.humanize(name), value, 10, { field: `performance-${name}`, text: value.toFixed(1) });
      })),
    facts(format.PERFORMANCE_STATS.map(([name, label]) => [label, format.number(performance.stats[name]), `performance-${name}`])),
  );
}

function renderGraph(region, run) {
  const { picture, summary } = causalGraph(run.diagnosis.causal_graph, run.diagnosis.failure_causes);
  region.append(
    el("p", { class: "hint" }, summary),
    el("div", { class: "graph-scroll", tabindex: "0", role: "region", "aria-label": "Causal graph, scrolls sideways" }, picture),
    el("ul", { class: "legend", "aria-label": "Legend" },
      el("li", { class: "legend-event" }, "event (filled: evidence of a failure, in its colour)"),
      el("li", { class: "legend-causes" }, "causes: evidence event → failure"),
      el("li", { class: "legend-reinforces" }, "reinforces: consecutive evidence of one failure"),
      el("li", { class: "legend-precedes" }, "precedes: event order (time →)")),
  );
}

/**
 * The diagnosis's id of each event, in event order: its causal graph starts with one node per event, ids
 * made unique (service/diagnosis/graph.py). A trace gives all the events of one span its span id as
 * event_id; there they are `<id>`, `<id>#2`..., so evidence names exactly one event. Empty without a diagnosis.
 */
const eventNodeIds = (run) => run.diagnosis?.causal_graph.nodes.map((node) => node.id) ?? [];

/** The payload beyond the table's columns; a span id that is the event id is in the id column already. */
const payload = (data) =>
  Object.fromEntries(
    Object.entries(data).filter(([key, value]) => !EVENT_KEYS_IN_COLUMNS.has(key) && !(key === "span_id" && value === data.event_id)),
  );

/** Every event (the API's first page of up to 10,000), payload in full, evidence highlighted. */
function renderEvidence(region, causes, run, { events }) {
  const failuresOf = failureTypesByEvent(causes);
  const nodeIds = eventNodeIds(run);
  if (events.length < run.event_count) {
    region.append(el("p", { class: "hint" }, `Showing the first ${format.integer(events.length)} of ${format.integer(run.event_count)} events.`));
  }
  const rows = events.map((event, index) => {
    const nodeId = nodeIds[index];
    const types = failuresOf.get(nodeId) ?? [];
    const rest = payload(event.data);
    const details = JSON.stringify(rest);
    return el(
      "tr",
      { id: nodeId && eventRowId(nodeId), tabindex: "-1", class: types.length ? `evidence slot-${format.failureSlot(types[0])}` : "" },
      el("td", { class: "number" }, event.seq),
      el("td", {}, el("code", {}, event.event_id)),
      el("td", {}, event.type),
      el("td", { class: "nowrap" }, format.time(event.timestamp)),
      el("td", { class: "payload" }, details.length <= DETAILS_INLINE_CHARS
        ? el("code", {}, details)
        : el("details", {}, el("summary", {}, el("code", {}, `${details.slice(0, DETAILS_INLINE_CHARS)}…`)),
          el("pre", {}, JSON.stringify(rest, null, 2)))),
      el("td", {}, types.map((type) =>
        el("button", { type: "button", class: "link-button", onclick: () => jumpTo(failureCardId(type)), "aria-label": `Evidence of ${format.humanize(type)}: show the failure` }, failureChip(type)))),
    );
  });
  const idHeading = run.kind === "trace" ? "Span id" : "Event id";
  region.append(dataTable("events", ["#", idHeading, "Type", "Time", "Payload", "Evidence of"], rows, ["#"]));
}

/** A section whose content is at hand: rendered at once. */
function shown(parent, title, render, run, className = null) {
  const region = section(parent, title, className);
  region.replaceChildren();
  render(region, run);
  region.setAttribute("aria-busy", "false");
}

/** The sections that apply to this run, in reading order; the events come with their own request. */
function renderSections(page, run, events) {
  const judged = run.diagnosis !== null && !format.isExecutionError(run);
  if (run.status !== "finalized") {
    page.append(el("p", { class: "notice", "data-field": "open-notice" }, "This run is still open: it is diagnosed when it is finalized. This page follows it as it grows."));
  }
  if (format.isExecutionError(run)) shown(page, "Execution error", renderExecutionError, run, "execution-error-lead");
  const grid = el("div", { class: "grid" });
  page.append(grid);
  if (judged) {
    shown(grid, "Executive summary", renderSummary, run);
    shown(grid, "Primary causal chain", renderChain, run);
    shown(grid, "Remediation", renderRemediation, run);
    shown(grid, "Dimension scores", renderScores, run);
  }
  shown(grid, "Run", renderRunFacts, run);
  if (run.parent_run_id || run.child_runs.length) shown(grid, "Agents", renderAgents, run);
  if (!format.isExecutionError(run)) shown(grid, "Execution outcome", renderOutcome, run);
  if (run.session_performance) shown(grid, "Session performance", renderPerformance, run);
  if (judged) {
    shown(page, "Failures", renderFailures, run);
    shown(page, "Causal graph", renderGraph, run);
  }
  const causes = judged ? run.diagnosis.failure_causes : [];
  const tasks = [];
  if (run.kind === "trace") {
    const timeline = section(page, "Span timeline");
    tasks.push({ region: timeline, request: runSpans(run.run_id), render: (region, answer) => renderTimeline(region, answer, run.run_id) });
  }
  const evidence = section(page, "Evidence explorer");
  tasks.push({ region: evidence, request: events, render: (region, answer) => renderEvidence(region, causes, run, answer) });
  return fillAll(tasks);
}

/**
 * While a run is open (a running agent, SPEC §3.4), asks every few seconds whether it grew or was finalized,
 * and then draws the page again in place; it stops once the user has left the page.
 */
function refreshWhileOpen(page, runId, shown) {
  const timer = setInterval(() => {
    if (!page.isConnected) {
      clearInterval(timer);
      return;
    }
    getRun(runId).then(
      (run) => {
        if (!page.isConnected || (run.status === shown.status && run.event_count === shown.event_count)) return;
        clearInterval(timer);
        page.replaceChildren();
        renderRun(page, runId);
      },
      () => {}, // a failed look is tried again at the next tick
    );
  }, OPEN_REFRESH_MS);
}

export function renderRun(page, runId) {
  document.title = `Run ${runId} · Repute`;
  const run = getRun(runId);
  const events = runEvents(runId);
  // The events are drawn once the run has come; a refusal that comes first is handled there, or not at all
  // for a run that cannot be read: never an uncaught rejection meanwhile.
  events.catch(() => {});
  const heading = [el("p", { class: "crumbs" }, el("a", { href: "#/runs" }, "← Runs")), el("h1", { tabindex: "-1" }, "Run ", el("code", {}, runId))];
  const loading = el("p", { class: "loading" }, "Loading…");
  page.append(...heading, loading);
  return run.then(
    (found) => {
      loading.remove();
      if (found.status !== "finalized") refreshWhileOpen(page, runId, found);
      return renderSections(page, found, events);
    },
    // A run that cannot be read (unknown id, bad key) is one message.
    (error) => page.replaceChildren(...heading, errorBox(error)),
  );
}
