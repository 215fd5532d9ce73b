// Fleet: the alerts firing now, each linked to what it is about, and every identity worst first (those
// with a firing alert, then the lowest reputation), with what its runs say beside its score (runs,
// execution errors, unsafe verdicts, top failure, last run, the last 30 days); any column sorts the table,
// and the hash keeps it.

import { firingAlerts, listIdentities } from "../api.js";
import { el, fillAll, section } from "../dom.js";
import * as format from "../format.js";
import { sparkline } from "../charts.js";
import { failureChip, identityHref, trendView } from "../widgets.js";

const runsHref = (filters) => `#/runs?${new URLSearchParams(filters)}`;

/** Where an alert's subject leads: the agent, or the runs it is about. */
const ALERT_TARGETS = {
  identity_score_drop: (subject) => identityHref(subject),
  failure_surge: (subject) => runsHref({ primary_failure: subject }),
  unsafe_share: () => runsHref({ readiness: "unsafe_for_production" }),
  execution_error_surge: () => runsHref({ execution_status: "execution_error" }),
  fleet_trust_drop: () => "#/runs",
};

// [key, heading, value of a row for sorting (null: the column does not sort), numeric]; rows without a
// value sort last either way. Execution errors sort by their share of the runs: that is what tells a flaky
// agent from a busy one.
const COLUMNS = [
  ["identity", "Identity", (row) => row.identity, false],
  ["alerts", "Alerts", (row) => row.alerts, true],
  ["overall", "Reputation", (row) => row.overall, true],
  ["last_30_days", "Last 30 days", null, false],
  ["confidence", "Confidence", (row) => row.confidence, true],
  ["trend_7d", "7-day trend", (row) => row.trend_7d, true],
  ["trend_30d", "30-day trend", (row) => row.trend_30d, true],
  ["runs", "Runs", (row) => row.runs, true],
  ["execution_errors", "Execution errors", (row) => row.execution_error_share, true],
  ["unsafe_runs", "Unsafe runs", (row) => row.unsafe_runs, true],
  ["top_failure", "Top failure", (row) => row.top_failure, false],
  ["last_run_at", "Last run (UTC)", (row) => row.last_run_at, false],
];
const DEFAULT_SORT = "worst";

function alertItem(alert) {
  const target = ALERT_TARGETS[alert.alert]?.(alert.subject);
  const subject = target ? el("a", { href: target, class: "subject" }, alert.subject) : el("span", { class: "subject" }, alert.subject);
  return el("li", { class: `severity-${alert.severity}` },
    el("span", { class: `badge severity-${alert.severity}` }, alert.severity), " ",
    el("strong", {}, format.humanize(alert.alert)), " · ", subject,
    el("p", { class: "message" }, alert.message),
    el("p", { class: "hint" }, `value ${format.number(alert.value)}, baseline ${format.number(alert.baseline)}`));
}

function renderAlerts(region, alerts) {
  if (alerts.length === 0) {
    region.append(el("p", { class: "empty" }, "No alert is firing."));
    return;
  }
  region.append(el("ul", { class: "alerts" }, alerts.map(alertItem)));
}

function compareBy(key, descending) {
  const [, , value] = COLUMNS.find(([name]) => name === key);
  return (a, b) => {
    const [x, y] = [value(a), value(b)];
    if (x === null || y === null) return (x === null) - (y === null);
    const order = typeof x === "string" ? x.localeCompare(y) : x - y;
    return descending ? -order : order;
  };
}

/** Firing alerts first, then the lowest reputation (none last), then by name. */
function worstFirst(a, b) {
  return b.alerts - a.alerts || compareBy("overall", false)(a, b) || a.identity.localeCompare(b.identity);
}

function sortRows(rows, sort, descending) {
  const compare = sort === DEFAULT_SORT ? worstFirst : compareBy(sort, descending);
  return [...rows].sort((a, b) => compare(a, b) || a.identity.localeCompare(b.identity));
}

function heading([key, label, value, numeric], sort, descending) {
  if (value === null) return el("th", { scope: "col" }, label);
  const active = key === sort;
  // A first click sorts numbers from the highest and names from A; a second click reverses.
  const nextDescending = active ? !descending : numeric;
  const href = `#/fleet?${new URLSearchParams({ sort: key, order: nextDescending ? "desc" : "asc" })}`;
  return el("th", { scope: "col", class: numeric ? "number" : null, "aria-sort": active ? (descending ? "descending" : "ascending") : "none" },
    el("a", { href, class: "sort", "data-sort": key }, label, active ? (descending ? " ▼" : " ▲") : ""));
}

/** "6 (50%)": the count and its share of the runs. */
const errorsText = (row) =>
  row.execution_error_share === null ? format.integer(row.execution_errors) : `${format.integer(row.execution_errors)} (${format.percent(row.execution_error_share)})`;

function identityRow(row, today) {
  return el(
    "tr",
    { "data-identity": row.identity },
    el("th", { scope: "row", class: "nowrap" }, el("a", { href: identityHref(row.identity) }, row.identity)),
    el("td", { class: "number", "data-field": "alerts" }, row.alerts ? el("span", { class: "badge severity-warning" }, row.alerts) : ""),
    el("td", { class: "number", "data-field": "overall" }, format.score(row.overall)),
    el("td", { "data-field": "last-30-days" }, sparkline(row.last_30_days, today)),
    el("td", { class: "number", "data-field": "confidence" }, format.percent(row.confidence)),
    el("td", { class: "number" }, trendView(row.trend_7d, "trend_7d")),
    el("td", { class: "number" }, trendView(row.trend_30d, "trend_30d")),
    el("td", { class: "number", "data-field": "runs" }, format.integer(row.runs)),
    el("td", { class: row.execution_errors ? "number flaky" : "number", "data-field": "execution-errors" }, errorsText(row)),
    el("td", { class: "number", "data-field": "unsafe-runs" }, format.integer(row.unsafe_runs)),
    el("td", { "data-field": "top-failure" }, row.top_failure ? failureChip(row.top_failure) : format.MISSING),
    el("td", { class: "nowrap", "data-field": "last-run" }, row.last_run_at ? format.minute(row.last_run_at) : format.MISSING),
  );
}

function renderIdentities(region, [{ identities, computed_at: computedAt }, alerts], sort, descending) {
  if (identities.length === 0) {
    region.append(el("p", { class: "empty" }, "No identity has a reputation yet (scores refresh every minute)."));
    return;
  }
  const alertsAbout = (identity) => alerts.filter((alert) => alert.alert === "identity_score_drop" && alert.subject === identity).length;
  const rows = sortRows(identities.map((row) => ({ ...row, alerts: alertsAbout(row.identity) })), sort, descending);
  const today = (computedAt ?? new Date().toISOString()).slice(0, 10);
  const order = sort === DEFAULT_SORT ? "Worst first: firing alerts, then the lowest reputation." : "";
  region.append(
    el("div", { class: "table-scroll" },
      el("table", { class: "fleet" },
        el("thead", {}, el("tr", {}, COLUMNS.map((column) => heading(column, sort, descending)))),
        el("tbody", {}, rows.map((row) => identityRow(row, today))))),
    el("p", { class: "hint" }, order, order && " ", `Scores computed ${format.time(computedAt)}. `,
      "Runs, execution errors (infrastructure: no verdict, no reputation), unsafe runs and the top failure cover the 90 days of the score; ",
      "the last 30 days show each day's mean trust (red on a day with an unsafe run) and a dark tick below a day with execution errors. ",
      sort !== DEFAULT_SORT && el("a", { href: "#/fleet" }, "Worst first")),
  );
}

export function renderFleet(page, query) {
  document.title = "Fleet · Repute";
  const sort = COLUMNS.some(([key, , value]) => value && key === query.get("sort")) ? query.get("sort") : DEFAULT_SORT;
  const descending = query.get("order") === "desc";
  page.append(el("h1", { tabindex: "-1" }, "Fleet"));
  const alerts = firingAlerts();
  const identities = listIdentities();
  const alertsRegion = section(page, "Firing alerts");
  const identitiesRegion = section(page, "Identities");
  return fillAll([
    { region: alertsRegion, request: alerts, render: renderAlerts },
    {
      region: identitiesRegion,
      request: Promise.all([identities, alerts]),
      render: (region, answers) => renderIdentities(region, answers, sort, descending),
    },
  ]);
}
