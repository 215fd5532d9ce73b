// Agent health: the 90-day reputation with its confidence and trends, the failures behind it, what moved
// each category's score over the last 7 days and the runs and signals that moved it most, and over time
// the reputation of each day next to the trust of each run in the lane of its readiness.

import {
  HISTORY_DAYS, identityRuns, reputation, reputationExplanation, reputationHistory, reputationStatement, statementKeysUrl,
} from "../api.js";
import { bar, el, errorBox, facts, fillAll, section } from "../dom.js";
import * as format from "../format.js";
import { contributionChart, reputationChart, trustChart } from "../charts.js";
import { failureChip, identityRunsHref, runHref, trendView } from "../widgets.js";

const NEUTRAL = 50;
// The explanation's two windows, in the order the chart draws them.
const WINDOWS = [
  { key: "7d_ago", series: "before", label: "7 days ago" },
  { key: "current", series: "now", label: "now" },
];

const trendSince = (trend, before, days, field) => [
  trendView(trend, field),
  before === null ? ` (no score ${days} days ago)` : ` (from ${format.score(before)})`,
];

function renderReputation(region, report) {
  region.append(
    el("div", { class: "headline" },
      el("p", { class: `trust-big ${report.overall === null ? "" : format.trustBand(report.overall)}` },
        el("span", { "data-field": "overall" }, format.score(report.overall)), el("span", { class: "out-of" }, " / 100 reputation")),
      el("p", { class: "confidence" }, "confidence ",
        el("strong", { "data-field": "confidence" }, format.percent(report.confidence)),
        ` (from ${format.integer(report.events)} event${report.events === 1 ? "" : "s"}; 100 give full confidence)`)),
    facts([
      ["7-day trend", trendSince(report.trend_7d, report.score_7d_ago, 7, "trend_7d")],
      ["30-day trend", trendSince(report.trend_30d, report.score_30d_ago, 30, "trend_30d")],
      ...format.CATEGORIES.map((category) => [format.title(category), format.score(report.categories[category]), category]),
      ["Positive / negative events", `${format.integer(report.positive_events)} / ${format.integer(report.negative_events)}`],
      ["Runs", runsFact(report), "runs"],
      ["Last run", format.time(report.last_run_at), "last-run"],
      ["Top failure", report.top_failure ? [failureChip(report.top_failure), " (the primary failure of most runs)"] : "none", "top-failure"],
      ["Window", `${report.window_days} days to ${report.as_of}`, "as_of"],
    ]),
    el("p", { class: "hint" },
      "Each run's verdict moves the score from a neutral 50; failures are recorded but weigh nothing on their own. ",
      el("a", { href: "reputation.md", "data-field": "reputation-doc" }, "How reputation is computed"), "."),
  );
}

/** "12: 6 execution errors (50%), 0 unsafe": what the score leaves out (execution errors) said beside it. */
const runsFact = (report) =>
  `${format.integer(report.runs)}: ${plural(report.execution_errors, "execution error")}` +
  `${report.execution_error_share === null ? "" : ` (${format.percent(report.execution_error_share)})`}, ${format.integer(report.unsafe_runs)} unsafe`;

function renderFailures(region, report) {
  const counts = Object.entries(report.failures).sort(([a, x], [b, y]) => y - x || a.localeCompare(b));
  if (counts.length === 0) {
    region.append(el("p", { class: "empty" }, "No failures in the last 90 days."));
    return;
  }
  const most = counts[0][1];
  region.append(
    el("div", { class: "bars" },
      counts.map(([type, count]) => bar(format.humanize(type), count, most, { field: `failures-${type}`, className: `slot-${format.failureSlot(type)}` }))),
  );
}

const plural = (count, noun) => `${format.integer(count)} ${noun}${count === 1 ? "" : "s"}`;

/**
 * The points an event type adds to or takes from its category's neutral 50 in one window: share × (score
 * − 50). The chart shows these rather than each type's own score because the category score is 50 plus
 * their sum, so the bars add up to the move: a type whose score held while its weight grew (more failed
 * payments, each at 0) shows as what moved the score, which its unchanged score would hide.
 */
const contribution = (window) => (window.score === null ? 0 : window.share * (window.score - NEUTRAL));

// An event type of weight 0 in both windows (a failure record, an execution error) counts for nothing.
const isCounted = (windows) => WINDOWS.some(({ key }) => windows[key].weight > 0);

function contributionRows(category, eventTypes) {
  return Object.entries(eventTypes)
    .filter(([, windows]) => isCounted(windows))
    .map(([eventType, windows]) => ({
      caption: `${eventType} · weighs ${format.percent(windows.current.share)} (was ${format.percent(windows["7d_ago"].share)})`,
      bars: WINDOWS.map(({ key, series, label }) => {
        const window = windows[key];
        const points = contribution(window);
        return {
          series,
          points,
          title: `${eventType} ${label}: ${format.trend(points).text} points to ${format.humanize(category)} ` +
            `(score ${format.score(window.score)}, ${format.percent(window.share)} of its weight, ${plural(window.events, "event")})`,
        };
      }),
    }));
}

/** One category: its score now and 7 days ago, each counted event type's move in words and as bars. */
function categoryMoves(category, { categories, changes }) {
  const { score, score_7d_ago: before, event_types: eventTypes } = categories[category];
  const names = Object.keys(eventTypes);
  const article = (...children) =>
    el("article", { class: "category-moves", "data-category": category }, el("h3", {}, format.title(category)), children);
  if (names.length === 0) return article(el("p", { class: "empty" }, "No events in this category, now or 7 days ago."));
  // The API's sentence has one clause per event type, in the order of event_types (which cannot hold "; ").
  const clauses = changes[category].split("; ");
  const uncounted = names.filter((name) => !isCounted(eventTypes[name]));
  const rows = contributionRows(category, eventTypes);
  const change = score === null || before === null ? null : score - before;
  return article(
    el("p", { class: "category-score" },
      el("strong", { "data-field": `explained-${category}` }, format.score(score)), " ", trendSince(change, before, 7, `explained-trend-${category}`)),
    el("ul", { class: "changes", "data-field": `changes-${category}` },
      names.map((name, index) => isCounted(eventTypes[name]) && el("li", {}, clauses[index]))),
    rows.length > 0 && el("div", { class: "chart" },
      contributionChart(`contribution-${category}-title`, `What each event type adds to ${format.humanize(category)}, now and 7 days ago`, rows)),
    uncounted.length > 0 && el("p", { class: "hint", "data-field": `uncounted-${category}` }, "Recorded with weight 0, so counted for nothing: ",
      uncounted.map((name) => `${name} (${plural(eventTypes[name].current.events, "event")})`).join(", "), "."),
  );
}

const cappedNote = ({ source, events }) =>
  el("p", { class: "notice", "data-field": "capped" }, `${plural(events, "signal")} from source `, el("code", {}, source),
    ` over the daily cap ${events === 1 ? "was" : "were"} not counted.`);

function renderMoves(region, explanation) {
  region.append(
    el("p", { class: "hint" },
      `The ${explanation.window_days} days to ${explanation.as_of} against the ${explanation.window_days} days that ended 7 days earlier. `,
      "Bars: the points each event type adds to or takes from the neutral 50; they sum to the category's score."),
    el("ul", { class: "legend", "aria-label": "Legend" }, WINDOWS.map(({ series, label }) => el("li", { class: `legend-${series}` }, label))),
    el("div", { class: "explain-grid" }, format.CATEGORIES.map((category) => categoryMoves(category, explanation))),
    ...explanation.capped.map(cappedNote),
  );
}

/**
 * A run's reference links to its page (and a child run's to the multi-agent run it is part of); any other (a
 * transaction, an attestation) is its id; signals posted without a reference are counted together under
 * their event type.
 */
function referenceName({ reference_type: type, reference_id: id, event_type: eventType, parent_run_id: parent, primary_failure: failure }) {
  if (format.RUN_KINDS.includes(type)) {
    const link = el("a", { href: runHref(id), class: "reference-link" }, id);
    return [
      link,
      parent && el("span", { class: "parent-run" }, " part of ", el("a", { href: runHref(parent), class: "parent-link" }, parent)),
      failure && [" ", failureChip(failure)],
    ];
  }
  if (id) return el("code", {}, id);
  return [el("code", {}, eventType), " signals (no reference)"];
}

function renderReferences(region, { top_references: references, window_days: days }) {
  if (references.length === 0) {
    region.append(el("p", { class: "empty" }, `Nothing moved the score in the last ${days} days.`));
    return;
  }
  region.append(
    el("ol", { class: "references" }, references.map((reference) =>
      el("li", { "data-reference": reference.reference_id || reference.event_type },
        el("span", { class: "reference-name" }, referenceName(reference)),
        trendView(reference.weighted_delta),
        el("span", { class: "reference-meta" },
          `${reference.reference_type || "signal"} · ${plural(reference.events, "event")} · `,
          el("span", { "data-field": "points" }, format.trend(reference.points).text), " points of the overall score")))),
    el("p", { class: "hint" },
      "Ranked by how much each moved its category: the sum over its events of the score delta (−1 worst to +1 best) × the source's credibility × the weight; ",
      "ties by the points it adds to or takes from the overall score (0–100), where a category's events share its weight."),
  );
}

function renderTrust(region, { runs, next_cursor: more }, identity) {
  const quality = runs.filter((run) => run.trust_score !== null);
  const excluded = runs.filter(format.isExecutionError).length;
  let belowBand = 0;
  if (quality.length === 0) {
    region.append(el("p", { class: "empty" }, "No diagnosed runs to chart yet."));
  } else {
    const points = quality.map((run) => ({ runId: run.run_id, time: Date.parse(run.run_at), trust: run.trust_score, readiness: run.readiness_level }));
    const chart = trustChart(points);
    belowBand = chart.belowBand;
    region.append(el("div", { class: "chart" }, chart.picture));
  }
  region.append(
    el("p", { class: "hint band-rule" },
      "Each run sits in the lane of its readiness, as high as its trust within the trust that verdict admits. ",
      "A cause can lower a verdict whatever the trust: a high-severity one makes a run review, a critical one unsafe. ",
      belowBand > 0 && el("strong", { "data-field": "below-band" },
        `${belowBand} run${belowBand === 1 ? " is" : "s are"} in a worse lane than ${belowBand === 1 ? "its" : "their"} trust alone would give (ringed).`)),
  );
  const notes = [
    more && `The latest ${runs.length} runs are shown.`,
    excluded > 0 && `${excluded} execution error${excluded === 1 ? "" : "s"} left out (infrastructure, not the agent).`,
  ].filter(Boolean);
  region.append(
    el("p", { class: "hint" }, notes.join(" "), notes.length ? " " : "", el("a", { href: identityRunsHref(identity) }, "List these runs")),
  );
}

function renderHistory(region, { days }) {
  if (!days.some((day) => day.reputation !== null)) {
    region.append(el("p", { class: "empty" }, `No reputation in the last ${days.length} days.`));
    return;
  }
  region.append(
    el("div", { class: "chart" }, reputationChart(days)),
    el("p", { class: "hint" }, "Each day's score over the 90 days that end on it; 50 is neutral (runs at trust 80 on average)."),
  );
}

/**
 * The signed statement (SPEC §15): its reputation today as a file anyone can verify offline, and how.
 * The file is made from the API's answer on click, never from markup.
 */
function renderStatement(region, identity) {
  const status = el("span", { class: "hint", "data-field": "statement-status" });
  const download = async () => {
    status.textContent = "Signing…";
    try {
      const envelope = await reputationStatement(identity);
      const file = new Blob([JSON.stringify(envelope, null, 2)], { type: "application/json" });
      const link = el("a", { href: URL.createObjectURL(file), download: `${identity.replace(/[^A-Za-z0-9._-]/g, "-")}.statement.json` });
      link.click();
      URL.revokeObjectURL(link.href);
      status.textContent = `Signed with key ${envelope.signatures[0].keyid}.`;
    } catch (error) {
      status.textContent = `Not signed: ${error.message}`;
    }
  };
  region.setAttribute("aria-busy", "false");
  region.replaceChildren(
    el("p", {}, "Today's reputation as a signed statement: a marketplace, a customer or another team's gate can check it offline, without an account here."),
    el("p", {}, el("button", { type: "button", "data-field": "statement-download", onclick: download }, "Download the signed statement"), " ", status),
    el("p", { class: "hint" }, "Verify it anywhere: ",
      el("code", { "data-field": "statement-verify" }, `repute verify ${identity}.statement.json --keys ${statementKeysUrl()}`),
      " (the public keys need no API key). How it works: docs/statements.md."),
  );
}

export function renderIdentity(page, identity) {
  document.title = `${identity} · agent health · Repute`;
  const report = reputation(identity);
  const explanation = reputationExplanation(identity);
  const runs = identityRuns(identity);
  const history = reputationHistory(identity);
  page.append(
    el("p", { class: "crumbs" }, el("a", { href: "#/fleet" }, "← Fleet")),
    el("h1", { tabindex: "-1" }, "Agent health: ", el("span", { "data-field": "identity" }, identity)),
  );
  const grid = el("div", { class: "grid" });
  const moves = el("div");
  const charts = el("div", { class: "chart-grid" });
  const content = el("div", {}, grid, moves, charts);
  page.append(content);
  const reputationRegion = section(grid, "Reputation (90 days)");
  const failuresRegion = section(grid, "Failures by type (90 days)");
  const referencesRegion = section(grid, "Runs and signals that moved it most");
  const movesRegion = section(moves, "What moved the score in 7 days");
  const historyRegion = section(charts, `Reputation over ${HISTORY_DAYS} days`);
  const trustRegion = section(charts, "Trust per run");
  renderStatement(section(content, "Signed statement"), identity);
  const filled = fillAll([
    { region: reputationRegion, request: report, render: renderReputation },
    { region: failuresRegion, request: report, render: renderFailures },
    { region: referencesRegion, request: explanation, render: renderReferences },
    { region: movesRegion, request: explanation, render: renderMoves },
    { region: historyRegion, request: history, render: renderHistory },
    { region: trustRegion, request: runs, render: (region, answer) => renderTrust(region, answer, identity) },
  ]);
  // An identity the service has never seen is a 404 in every region: said once instead.
  return filled.then(() =>
    report.catch((error) => {
      if (error.status === 404) content.replaceChildren(errorBox(error));
    }),
  );
}
