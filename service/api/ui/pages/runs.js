// Runs list: filters, search and sort kept in the hash (shareable, back button works), cursor pagination. The
// list comes newest first; a click on a column's heading sorts the page at hand.

import { RUNS_PAGE_SIZE, listRuns } from "../api.js";
import { dataTable, el, fillAll, section } from "../dom.js";
import * as format from "../format.js";
import { chosenSort, compareBy, sortHeading } from "../sorting.js";
import { executionErrorBadge, identityHref, readinessBadge, runHref } from "../widgets.js";

const FILTERS = ["q", "identity", "readiness", "primary_failure", "execution_status", "from", "to"];
const NEWEST_FIRST = "newest";

const column = (key, label, value, numeric) => ({ key, label, value, numeric });
const startedAt = (run) => run.started_at ?? run.run_at; // a run whose events have no time: when it was stored
const COLUMNS = [
  column("run_id", "Run", (run) => run.run_id, false),
  column("identity", "Identity", (run) => run.identity, false),
  column("started_at", "Started (UTC)", startedAt, false),
  column("duration", "Duration", (run) => run.duration_seconds, true),
  column("trust", "Trust", (run) => run.trust_score, true),
  column("readiness", "Readiness", (run) => run.readiness_level, false),
  column("primary_failure", "Primary failure", (run) => run.primary_failure, false),
  column("execution", "Execution", (run) => run.execution_status || run.status, false),
  column("events", "Events", (run) => run.event_count, true),
  column("tokens", "Tokens", (run) => run.total_tokens, true),
  column("cost", "Cost", (run) => run.cost_usd, true),
];

export function renderRuns(page, query) {
  document.title = "Runs · Repute";
  const filters = Object.fromEntries(FILTERS.map((name) => [name, query.get(name) ?? ""]));
  const cursor = query.get("cursor");
  const sorting = chosenSort(query, COLUMNS, NEWEST_FIRST);
  page.append(el("h1", { tabindex: "-1" }, "Runs"), filterForm(filters));
  const region = section(page, "Runs, newest first");
  const runs = listRuns(apiFilters(filters), cursor);
  return fillAll([{ region, request: runs, render: (body, answer) => renderTable(body, answer, filters, cursor, sorting) }]);
}

/** The page's filters as the API's query: the date range is whole UTC days, `to` included. */
function apiFilters({ q, identity, readiness, primary_failure, execution_status, from, to }) {
  const dayAfter = (isoDay) => new Date(Date.parse(`${isoDay}T00:00:00Z`) + 86_400_000).toISOString();
  return {
    q,
    identity,
    readiness,
    primary_failure,
    execution_status,
    since: from ? `${from}T00:00:00Z` : "",
    until: to ? dayAfter(to) : "",
  };
}

function runsHash(filters, cursor, { sort, order } = {}) {
  const params = new URLSearchParams(Object.entries(filters).filter(([, value]) => value));
  if (cursor) params.set("cursor", cursor);
  if (sort) params.set("sort", sort);
  if (order) params.set("order", order);
  const query = params.toString();
  return query ? `#/runs?${query}` : "#/runs";
}

function choice(name, label, options, selected) {
  return el(
    "div",
    { class: "field" },
    el("label", { for: `filter-${name}` }, label),
    el(
      "select",
      { id: `filter-${name}`, name },
      el("option", { value: "" }, "any"),
      options.map((option) => el("option", { value: option, selected: option === selected }, format.humanize(option))),
    ),
  );
}

function input(name, label, type, value) {
  return el(
    "div",
    { class: "field" },
    el("label", { for: `filter-${name}` }, label),
    el("input", { id: `filter-${name}`, name, type, value, autocomplete: "off", spellcheck: "false" }),
  );
}

function filterForm(filters) {
  const form = el(
    "form",
    { class: "filters", role: "search", "aria-label": "Filter runs" },
    input("q", "Search (part of an identity or run id)", "search", filters.q),
    input("identity", "Identity", "text", filters.identity),
    choice("readiness", "Readiness", format.READINESS_LEVELS, filters.readiness),
    choice("primary_failure", "Primary failure", format.FAILURE_TYPES, filters.primary_failure),
    choice("execution_status", "Execution status", format.EXECUTION_STATUSES, filters.execution_status),
    input("from", "From (UTC day)", "date", filters.from),
    input("to", "To (UTC day, included)", "date", filters.to),
    el("div", { class: "field actions" }, el("button", { type: "submit" }, "Apply filters"), el("a", { href: "#/runs" }, "Clear")),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const chosen = Object.fromEntries(FILTERS.map((name) => [name, form.elements[name].value.trim()]));
    location.hash = runsHash(chosen);
  });
  return form;
}

function runRow(run) {
  // An execution error has no verdict: its stage and reason stand where the readiness would.
  const verdict = format.isExecutionError(run) ? executionErrorBadge(run) : readinessBadge(run.readiness_level);
  return el(
    "tr",
    { "data-run-id": run.run_id, class: format.isExecutionError(run) ? "execution-error" : null },
    el("th", { scope: "row" }, el("a", { href: runHref(run.run_id), class: "run-link" }, run.run_id)),
    el("td", {}, el("a", { href: identityHref(run.identity) }, run.identity)),
    el("td", { class: "nowrap", "data-field": "started" }, format.time(startedAt(run))),
    el("td", { class: "number nowrap", "data-field": "duration" }, format.seconds(run.duration_seconds)),
    el("td", { class: "number", "data-field": "trust" }, run.trust_score ?? format.MISSING),
    el("td", {}, verdict),
    el("td", {}, format.humanize(run.primary_failure)),
    el("td", { "data-field": "execution" }, format.humanize(run.execution_status || run.status)),
    el("td", { class: "number" }, format.integer(run.event_count)),
    el("td", { class: "number", "data-field": "tokens" }, format.integer(run.total_tokens)),
    el("td", { class: "number", "data-field": "cost" }, format.dollars(run.cost_usd)),
  );
}

function emptyText(filters, cursor) {
  if (cursor) return "No older runs.";
  if (Object.values(filters).some(Boolean)) return "No runs match these filters.";
  return "No runs yet: send one with POST /v1/sessions, or `repute ingest FILE`.";
}

function renderTable(region, { runs, next_cursor: nextCursor }, filters, cursor, sorting) {
  const kept = sorting.sort === NEWEST_FIRST ? {} : { sort: sorting.sort, order: sorting.descending ? "desc" : "asc" };
  if (runs.length === 0) {
    region.append(el("p", { class: "empty", "data-field": "empty" }, emptyText(filters, cursor)));
  } else {
    const sorted = sorting.sort === NEWEST_FIRST ? runs : [...runs].sort(compareBy(COLUMNS, sorting.sort, sorting.descending));
    const headings = COLUMNS.map((each) => sortHeading(each, sorting, (chosen) => runsHash(filters, cursor, chosen)));
    region.append(dataTable("runs sortable", headings, sorted.map(runRow)));
    if (sorting.sort !== NEWEST_FIRST) {
      region.append(el("p", { class: "hint", "data-field": "sorted" }, `Sorted: the ${format.integer(runs.length)} runs of this page. `,
        el("a", { href: runsHash(filters, cursor) }, "Newest first")));
    }
  }
  region.append(
    el(
      "nav",
      { class: "pager", "aria-label": "Pages of runs" },
      cursor && el("a", { href: runsHash(filters, null, kept) }, "← Newest runs"),
      nextCursor && el("a", { href: runsHash(filters, nextCursor, kept), rel: "next" }, `Older runs (next ${RUNS_PAGE_SIZE}) →`),
    ),
  );
}
