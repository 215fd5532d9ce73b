// Fleet: the alerts firing now, each linked to what it is about, and every identity worst first (those
// with a firing alert, then the lowest reputation), with what its runs say beside its score (runs,
// execution errors, unsafe verdicts, top failure, last run, the last 30 days); any column sorts the table,
// and the hash keeps it.

import { firingAlerts, listIdentities } from "../api.js";
import { dataTable, el, fillAll, section } from "../dom.js";
import * as format from "../format.js";
import { sparkline } from "../charts.js";
import { chosenSort, compareBy, sortHeading } from "../sorting.js";
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

// Each column (service/api/ui/sorting.js): a row's value to sort by, null where the column does not sort.
// Execution errors sort by their share of the runs: that is what tells a flaky agent from a busy one.
const column = (key, label, value, numeric) => ({ key, label, value, numeric });
const COLUMNS = [
  column("identity", "Identity", (row) => row.identity, false),
  column("alerts", "Alerts", (row) => row.alerts, true),
  column("overall", "Reputation", (row) => row.overall, true),
  column("last_30_days", "Last 30 days", null, false),
  column("confidence", "Confidence", (row) => row.confidence, true),
  column("trend_7d", "7-day trend", (row) => row.trend_7d, true),
  column("trend_30d", "30-day trend", (row) => row.trend_30d, true),
  column("runs", "Runs", (row) => row.runs, true),
  column("execution_errors", "Execution errors", (row) => row.execution_error_share, true),
  column("unsafe_runs", "Unsafe runs", (row) => row.unsafe_runs, true),
  column("top_failure", "Top failure", (row) => row.top_failure, false),
  column("last_run_at", "Last run (UTC)", (row) => row.last_run_at, false),
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

/** Firing alerts first, then the lowest reputation (none last), then by name. */
function worstFirst(a, b) {
  return b.alerts - a.alerts || compareBy(COLUMNS, "overall", false)(a, b) || a.identity.localeCompare(b.identity);
}

function sortRows(rows, { sort, descending }) {
  const compare = sort === DEFAULT_SORT ? worstFirst : compareBy(COLUMNS, sort, descending);
  return [...rows].sort((a, b) => compare(a, b) || a.identity.localeCompare(b.identity));
}

function fleetHash({ q, sort, order }) {
  const params = new URLSearchParams(Object.entries({ q, sort, order }).filter(([, value]) => value));
  const query = params.toString();
  return query ? `#/fleet?${query}` : "#/fleet";
}

function searchForm(q, sorting) {
  const form = el("form", { class: "filters", role: "search", "aria-label": "Fleet search" },
    el("div", { class: "field" }, el("label", { for: "fleet-search" }, "Search identities"),
      el("input", { id: "fleet-search", name: "q", type: "search", value: q, autocomplete: "off", spellcheck: "false", placeholder: "part of a name" })),
    el("div", { class: "field actions" }, el("button", { type: "submit" }, "Search"), q && el("a", { href: fleetHash({}) }, "Clear")));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const sort = sorting.sort === DEFAULT_SORT ? "" : sorting.sort;
    location.hash = fleetHash({ q: form.elements.q.value.trim(), sort, order: sort && (sorting.descending ? "desc" : "asc") });
  });
  return form;
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

function renderIdentities(region, [{ identities, computed_at: computedAt }, alerts], sorting, q) {
  if (identities.length === 0) {
    const empty = q ? `No identity holds “${q}”.` : "No identity has a reputation yet (scores refresh every minute).";
    region.append(el("p", { class: "empty", "data-field": "empty" }, empty));
    return;
  }
  const alertsAbout = (identity) => alerts.filter((alert) => alert.alert === "identity_score_drop" && alert.subject === identity).length;
  const rows = sortRows(identities.map((row) => ({ ...row, alerts: alertsAbout(row.identity) })), sorting);
  const today = (computedAt ?? new Date().toISOString()).slice(0, 10);
  const worst = sorting.sort === DEFAULT_SORT;
  const order = worst ? "Worst first: firing alerts, then the lowest reputation." : "";
  const headings = COLUMNS.map((each) => sortHeading(each, sorting, ({ sort, order }) => fleetHash({ q, sort, order })));
  region.append(
    dataTable("fleet sortable", headings, rows.map((row) => identityRow(row, today))),
    el("p", { class: "hint" }, order, order && " ", `Scores computed ${format.time(computedAt)}. `,
      "Runs, execution errors (infrastructure: no verdict, no reputation), unsafe runs and the top failure cover the 90 days of the score; ",
      "the last 30 days show each day's mean trust (red on a day with an unsafe run) and a dark tick below a day with execution errors. ",
      !worst && el("a", { href: fleetHash({ q }) }, "Worst first")),
  );
}

export function renderFleet(page, query) {
  document.title = "Fleet · Repute";
  const sorting = chosenSort(query, COLUMNS, DEFAULT_SORT);
  const q = query.get("q") ?? "";
  page.append(el("h1", { tabindex: "-1" }, "Fleet"), searchForm(q, sorting));
  const alerts = firingAlerts();
  const identities = listIdentities(q);
  const alertsRegion = section(page, "Firing alerts");
  const identitiesRegion = section(page, "Identities");
  return fillAll([
    { region: alertsRegion, request: alerts, render: renderAlerts },
    {
      region: identitiesRegion,
      request: Promise.all([identities, alerts]),
      render: (region, answers) => renderIdentities(region, answers, sorting, q),
    },
  ]);
}
