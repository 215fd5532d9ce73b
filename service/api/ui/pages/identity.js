// Agent health: the 90-day reputation with its confidence and trends, the failures behind it, and over
// time the reputation of each day next to the trust of each run on the readiness bands.

import { HISTORY_DAYS, identityRuns, reputation, reputationHistory } from "../api.js";
import { bar, el, facts, fillAll, section } from "../dom.js";
import * as format from "../format.js";
import { reputationChart, trustChart } from "../charts.js";
import { identityRunsHref, trendView } from "../widgets.js";

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
      ["Task quality", format.score(report.categories.task_quality), "task_quality"],
      ["Economic", format.score(report.categories.economic), "economic"],
      ["Identity hygiene", format.score(report.categories.identity_hygiene), "identity_hygiene"],
      ["Positive / negative events", `${format.integer(report.positive_events)} / ${format.integer(report.negative_events)}`],
      ["Window", `${report.window_days} days to ${report.as_of}`, "as_of"],
    ]),
  );
}

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
      "Bands are trust alone; a point's colour is its readiness, which a cause can lower whatever the trust: ",
      "a high-severity cause makes a run review, a critical one unsafe. ",
      belowBand > 0 && el("strong", { "data-field": "below-band" }, `${belowBand} run${belowBand === 1 ? " is" : "s are"} below ${belowBand === 1 ? "its" : "their"} band (ringed).`)),
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

export function renderIdentity(page, identity) {
  document.title = `${identity} · agent health · Repute`;
  const report = reputation(identity);
  const runs = identityRuns(identity);
  const history = reputationHistory(identity);
  page.append(
    el("p", { class: "crumbs" }, el("a", { href: "#/fleet" }, "← Fleet")),
    el("h1", { tabindex: "-1" }, "Agent health: ", el("span", { "data-field": "identity" }, identity)),
  );
  const grid = el("div", { class: "grid" });
  const charts = el("div", { class: "chart-grid" });
  page.append(grid, charts);
  const reputationRegion = section(grid, "Reputation (90 days)");
  const failuresRegion = section(grid, "Failures by type (90 days)");
  const historyRegion = section(charts, `Reputation over ${HISTORY_DAYS} days`);
  const trustRegion = section(charts, "Trust per run");
  return fillAll([
    { region: reputationRegion, request: report, render: renderReputation },
    { region: failuresRegion, request: report, render: renderFailures },
    { region: historyRegion, request: history, render: renderHistory },
    { region: trustRegion, request: runs, render: (region, answer) => renderTrust(region, answer, identity) },
  ]);
}
