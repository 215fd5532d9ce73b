// Runs list: filters kept in the hash (shareable, back button works), cursor pagination.

import { RUNS_PAGE_SIZE, listRuns } from "../api.js";
import { dataTable, el, fillAll, section } from "../dom.js";
import * as format from "../format.js";
import { executionErrorBadge, identityHref, readinessBadge, runHref } from "../widgets.js";

const FILTERS = ["identity", "readiness", "primary_failure", "execution_status", "from", "to"];

export function renderRuns(page, query) {
  document.title = "Runs · Repute";
  const filters = Object.fromEntries(FILTERS.map((name) => [name, query.get(name) ?? ""]));
  const cursor = query.get("cursor");
  page.append(el("h1", { tabindex: "-1" }, "Runs"), filterForm(filters));
  const region = section(page, "Runs, newest first");
  const runs = listRuns(apiFilters(filters), cursor);
  return fillAll([{ region, request: runs, render: (body, answer) => renderTable(body, answer, filters, cursor) }]);
}

/** The page's filters as the API's query: the date range is whole UTC days, `to` included. */
function apiFilters({ identity, readiness, primary_failure, execution_status, from, to }) {
  const dayAfter = (isoDay) => new Date(Date.parse(`${isoDay}T00:00:00Z`) + 86_400_000).toISOString();
  return {
    identity,
    readiness,
    primary_failure,
    execution_status,
    since: from ? `${from}T00:00:00Z` : "",
    until: to ? dayAfter(to) : "",
  };
}

function runsHash(filters, cursor) {
  const params = new URLSearchParams(Object.entries(filters).filter(([, value]) => value));
  if (cursor) params.set("cursor", cursor);
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
    el("td", {}, format.time(run.run_at)),
    el("td", { class: "number", "data-field": "trust" }, run.trust_score ?? format.MISSING),
    el("td", {}, verdict),
    el("td", {}, format.humanize(run.primary_failure)),
    el("td", {}, format.humanize(run.execution_status || run.status)),
    el("td", { class: "number" }, format.integer(run.event_count)),
  );
}

function emptyText(filters, cursor) {
  if (cursor) return "No older runs.";
  if (Object.values(filters).some(Boolean)) return "No runs match these filters.";
  return "No runs yet: send one with POST /v1/sessions, or `repute ingest FILE`.";
}

function renderTable(region, { runs, next_cursor: nextCursor }, filters, cursor) {
  if (runs.length === 0) {
    region.append(el("p", { class: "empty", "data-field": "empty" }, emptyText(filters, cursor)));
  } else {
    const headings = ["Run", "Identity", "Run at", "Trust", "Readiness", "Primary failure", "Execution", "Events"];
    region.append(dataTable("runs", headings, runs.map(runRow), ["Trust", "Events"]));
  }
  region.append(
    el(
      "nav",
      { class: "pager", "aria-label": "Pages of runs" },
      cursor && el("a", { href: runsHash(filters) }, "← Newest runs"),
      nextCursor && el("a", { href: runsHash(filters, nextCursor), rel: "next" }, `Older runs (next ${RUNS_PAGE_SIZE}) →`),
    ),
  );
}
