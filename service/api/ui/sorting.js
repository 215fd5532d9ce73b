// Tables sorted by a click on a column's heading; the sort lives in the hash (sort=<key>&order=asc|desc), so a
// sorted table can be shared and the back button undoes a sort. A column is { key, label, value, numeric }:
// `value` gives a row's value to sort by (null: the column does not sort); rows without a value sort last.

import { el } from "./dom.js";

/** The sort the hash asks for, when one of `columns` sorts that way; else `fallback`. */
export function chosenSort(query, columns, fallback) {
  const key = query.get("sort");
  const known = columns.some((column) => column.value && column.key === key);
  return { sort: known ? key : fallback, descending: query.get("order") === "desc" };
}

export function compareBy(columns, key, descending) {
  const { value } = columns.find((column) => column.key === key);
  return (a, b) => {
    const [x, y] = [value(a), value(b)];
    if (x === null || x === undefined || y === null || y === undefined) return (x == null) - (y == null);
    const order = typeof x === "string" ? x.localeCompare(y) : x - y;
    return descending ? -order : order;
  };
}

/**
 * A column's heading: a link that sorts by it (a first click sorts numbers from the highest and text from A, a
 * second click reverses), `hrefFor({ sort, order })` making the link. Its `data-label` is the column's label.
 */
export function sortHeading({ key, label, value, numeric }, { sort, descending }, hrefFor) {
  const attributes = { scope: "col", class: numeric ? "number" : null, "data-label": label };
  if (!value) return el("th", attributes, label);
  const active = key === sort;
  const nextDescending = active ? !descending : numeric;
  const href = hrefFor({ sort: key, order: nextDescending ? "desc" : "asc" });
  return el("th", { ...attributes, "aria-sort": active ? (descending ? "descending" : "ascending") : "none" },
    el("a", { href, class: "sort", "data-sort": key }, label, active ? (descending ? " ▼" : " ▲") : ""));
}
