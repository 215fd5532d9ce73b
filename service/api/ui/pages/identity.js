// Agent health: trust per run over time on the readiness bands, the 90-day reputation with its
// confidence and trends, and the failures behind it.

import { identityRuns, reputation } from "../api.js";
import { bar, el, facts, fillAll, section } from "../dom.js";
import * as format from "../format.js";
import { trustChart } from "../charts.js";
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
  const quality = runs.filter((run) => run.trust_score !== null && run.execution_status !== "execution_error");
  const excluded = runs.filter((run) => run.execution_status === "execution_error").length;
  if (quality.length === 0) {
    region.append(el("p", { class: "empty" }, "No diagnosed runs to chart yet."));
  } else {
    const points = quality.map((run) => ({ runId: run.run_id, time: Date.parse(run.run_at), trust: run.trust_score, readiness: run.readiness_level }));
    region.append(el("div", { class: "chart" }, trustChart(points)));
  }
  const notes = [
    more && `The latest ${runs.length} runs are shown.`,
    excluded > 0 && `${excluded} execution error${excluded === 1 ? "" : "s"} left out (infrastructure, not the agent).`,
  ].filter(Boolean);
  region.append(
    el("p", { class: "hint" }, notes.join(" "), notes.length ? " " : "", el("a", { href: identityRunsHref(identity) }, "List these runs")),
  );
}

export function renderIdentity(page, identity) {
  document.title = `${identity} · agent health · Repute`;
  const report = reputation(identity);
  const runs = identityRuns(identity);
  page.append(
    el("p", { class: "crumbs" }, el("a", { href: "#/fleet" }, "← Fleet")),
    el("h1", { tabindex: "-1" }, "Agent health: ", el("span", { "data-field": "identity" }, identity)),
  );
  const grid = el("div", { class: "grid" });
  page.append(grid);
  const reputationRegion = section(grid, "Reputation (90 days)");
  const failuresRegion = section(grid, "Failures by type (90 days)");
  const trustRegion = section(page, "Trust per run");
  return fillAll([
    { region: reputationRegion, request: report, render: renderReputation },
    { region: failuresRegion, request: report, render: renderFailures },
    { region: trustRegion, request: runs, render: (region, answer) => renderTrust(region, answer, identity) },
  ]);
}
