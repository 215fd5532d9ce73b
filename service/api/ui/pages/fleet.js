// Fleet: every identity by reputation with its trends, and the alerts firing now.

import { firingAlerts, listIdentities } from "../api.js";
import { dataTable, el, fillAll, section } from "../dom.js";
import * as format from "../format.js";
import { identityHref, trendView } from "../widgets.js";

function renderAlerts(region, alerts) {
  if (alerts.length === 0) {
    region.append(el("p", { class: "empty" }, "No alert is firing."));
    return;
  }
  region.append(
    el("ul", { class: "alerts" }, alerts.map((alert) =>
      el("li", { class: `severity-${alert.severity}` },
        el("span", { class: `badge severity-${alert.severity}` }, alert.severity), " ",
        el("strong", {}, format.humanize(alert.alert)), " · ", el("span", { class: "subject" }, alert.subject),
        el("p", { class: "message" }, alert.message),
        el("p", { class: "hint" }, `value ${format.number(alert.value)}, baseline ${format.number(alert.baseline)}`)))),
  );
}

function identityRow(row) {
  return el(
    "tr",
    { "data-identity": row.identity },
    el("th", { scope: "row" }, el("a", { href: identityHref(row.identity) }, row.identity)),
    el("td", { class: "number", "data-field": "overall" }, format.score(row.overall)),
    el("td", { class: "number", "data-field": "confidence" }, format.percent(row.confidence)),
    el("td", { class: "number" }, trendView(row.trend_7d, "trend_7d")),
    el("td", { class: "number" }, trendView(row.trend_30d, "trend_30d")),
    el("td", { class: "number" }, format.integer(row.events)),
  );
}

function renderIdentities(region, { identities, computed_at: computedAt }) {
  if (identities.length === 0) {
    region.append(el("p", { class: "empty" }, "No identity has a reputation yet (scores refresh every minute)."));
    return;
  }
  const headings = ["Identity", "Reputation", "Confidence", "7-day trend", "30-day trend", "Events"];
  region.append(
    dataTable("fleet", headings, identities.map(identityRow), headings.slice(1)),
    el("p", { class: "hint" }, `Scores computed ${format.time(computedAt)}.`),
  );
}

export function renderFleet(page) {
  document.title = "Fleet · Repute";
  page.append(el("h1", { tabindex: "-1" }, "Fleet"));
  const alerts = firingAlerts();
  const identities = listIdentities();
  const alertsRegion = section(page, "Firing alerts");
  const identitiesRegion = section(page, "Identities by reputation");
  return fillAll([
    { region: alertsRegion, request: alerts, render: renderAlerts },
    { region: identitiesRegion, request: identities, render: renderIdentities },
  ]);
}
