// Building the page: elements are made with createElement and text nodes, never from HTML strings,
// so nothing an agent wrote into its events can become markup.

import { forgetKey } from "./api.js";

const SVG_NS = "http://www.w3.org/2000/svg";

function build(element, attributes, children) {
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === "function") element.addEventListener(name.replace(/^on/, ""), value);
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  element.append(...children.flat(Infinity).filter((child) => child !== null && child !== undefined && child !== false));
  return element;
}

/** An HTML element: el("a", { href: "#/runs" }, "Runs"). Functions in attributes are listeners. */
export const el = (tag, attributes = {}, ...children) => build(document.createElement(tag), attributes, children);

/** An SVG element, same calling convention as el(). */
export const svg = (tag, attributes = {}, ...children) =>
  build(document.createElementNS(SVG_NS, tag), attributes, children);

/** A titled section whose body shows "Loading…" until a request fills it. Returns the body. */
export function section(parent, title, className = null) {
  const headingId = `heading-${title.toLowerCase().replace(/[^a-z0-9]+/g, "-")}`;
  const body = el("div", { class: "section-body", "aria-busy": "true" }, el("p", { class: "loading" }, "Loading…"));
  parent.append(el("section", { "aria-labelledby": headingId, class: className }, el("h2", { id: headingId }, title), body));
  return body;
}

/** A message for a failed request; a rejected key offers to enter another one. */
export function errorBox(error) {
  const box = el("div", { class: "error", role: "alert" }, el("p", {}, errorText(error)));
  if (error.status === 401) {
    box.append(
      el("button", { type: "button", onclick: () => { forgetKey(); location.reload(); } }, "Enter another API key"),
    );
  }
  return box;
}

function errorText(error) {
  if (error.status === 401) return "The API key was not accepted (401). It may be mistyped or revoked.";
  if (error.status === 403) return `This API key lacks the read scope (403): ${error.message}`;
  if (error.status === 404) return `Not found: ${error.message}`;
  if (error.status) return `The service answered ${error.status}: ${error.message}`;
  return error.message;
}

/**
 * Fills regions from requests the caller has already started (so they run as one parallel batch):
 * each region is rendered as soon as its own answer arrives. Resolves when every region is done.
 */
export function fillAll(tasks) {
  return Promise.all(
    tasks.map(({ region, request, render }) =>
      request.then(
        (data) => {
          region.replaceChildren();
          render(region, data);
        },
        (error) => region.replaceChildren(errorBox(error)),
      ).finally(() => region.setAttribute("aria-busy", "false")),
    ),
  );
}

/** A horizontal bar with its number: the number is text, the bar is decoration. */
export function bar(label, value, max, { field, className = "", text = value ?? "—" } = {}) {
  const fill = el("span", { class: `bar-fill ${className}` });
  fill.style.width = `${Math.max(0, Math.min(100, (100 * (value ?? 0)) / max))}%`;
  return el(
    "div",
    { class: "bar-row" },
    el("span", { class: "bar-label" }, label),
    el("span", { class: "bar-track", "aria-hidden": "true" }, fill),
    el("span", { class: "bar-value", "data-field": field }, text),
  );
}

/**
 * A scrollable table; `numeric` names the headings whose column is right-aligned numbers. A heading is its text
 * or a <th> made already (a sortable one, with its text in `data-label`). Each cell carries its column's heading
 * (`data-label`), which a narrow screen shows beside it where a table stacks its rows.
 */
export function dataTable(className, headings, rows, numeric = []) {
  const head = headings.map((heading) =>
    typeof heading === "string" ? el("th", { scope: "col", class: numeric.includes(heading) ? "number" : null }, heading) : heading);
  const labels = headings.map((heading) => (typeof heading === "string" ? heading : heading.dataset.label));
  for (const row of rows) [...row.cells].forEach((cell, index) => cell.setAttribute("data-label", labels[index]));
  return el(
    "div",
    { class: "table-scroll" },
    el("table", { class: className }, el("thead", {}, el("tr", {}, head)), el("tbody", {}, rows)),
  );
}

/** A definition list from [term, value, field] rows; `field` names the value for tests and styling. */
export const facts = (rows) =>
  el("dl", { class: "facts" }, rows.map(([term, value, field]) => [el("dt", {}, term), el("dd", { "data-field": field }, value)]));
