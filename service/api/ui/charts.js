// Charts of an agent: over time, trust per run on the readiness bands and the 90-day reputation per day;
// and what each event type adds to a category score, now and 7 days ago.

import { svg } from "./dom.js";
import * as format from "./format.js";
import { runHref } from "./widgets.js";

const WIDTH = 760;
const HEIGHT = 280;
const MARGIN = { left: 44, right: 112, top: 14, bottom: 40 };
const BANDS = [
  { name: "ready", from: 80, to: 100, label: "ready ≥ 80" },
  { name: "review", from: 60, to: 80, label: "review 60–80" },
  { name: "unsafe", from: 0, to: 60, label: "unsafe < 60" },
];
const SCORE_TICKS = [0, 20, 40, 60, 80, 100];
const TIME_TICKS = 5;
const INSET = 14; // keeps the first and last points off the axes
const DAY_MS = 86_400_000;

/** Scales and axes of a 0..100 chart over [first, last] (ms). */
function frame(first, last, yLabel) {
  const plotWidth = WIDTH - MARGIN.left - MARGIN.right;
  const plotHeight = HEIGHT - MARGIN.top - MARGIN.bottom;
  const x = (time) =>
    MARGIN.left + INSET + (last === first ? plotWidth / 2 - INSET : ((time - first) / (last - first)) * (plotWidth - 2 * INSET));
  const y = (value) => MARGIN.top + (1 - value / 100) * plotHeight;
  const right = MARGIN.left + plotWidth;
  const bottom = MARGIN.top + plotHeight;
  const times = last === first ? [first] : Array.from({ length: TIME_TICKS }, (_, i) => first + ((last - first) * i) / (TIME_TICKS - 1));
  const axes = [
    svg("line", { x1: MARGIN.left, x2: MARGIN.left, y1: MARGIN.top, y2: bottom, class: "axis" }),
    svg("line", { x1: MARGIN.left, x2: right, y1: bottom, y2: bottom, class: "axis" }),
    SCORE_TICKS.map((value) => [
      svg("line", { x1: MARGIN.left - 4, x2: MARGIN.left, y1: y(value), y2: y(value), class: "tick" }),
      svg("text", { x: MARGIN.left - 8, y: y(value) + 4, class: "tick-label", "text-anchor": "end" }, value),
    ]),
    times.map((time) => {
      const iso = new Date(time).toISOString();
      const label = last - first < 2 * DAY_MS ? iso.slice(5, 16).replace("T", " ") : iso.slice(0, 10);
      return svg("text", { x: x(time), y: HEIGHT - MARGIN.bottom + 18, class: "tick-label", "text-anchor": "middle" }, label);
    }),
    svg("text", { x: 12, y: MARGIN.top + plotHeight / 2, class: "axis-label", transform: `rotate(-90 12 ${MARGIN.top + plotHeight / 2})`, "text-anchor": "middle" }, yLabel),
  ];
  return { x, y, right, plotWidth, axes };
}

function chart({ className, titleId, title, width = WIDTH, height = HEIGHT }, ...children) {
  return svg(
    "svg",
    { viewBox: `0 0 ${width} ${height}`, role: "group", "aria-labelledby": titleId, class: className },
    svg("title", { id: titleId }, title),
    children,
  );
}

/**
 * Trust per run on the readiness bands. points: [{ runId, time (ms), trust, readiness }] in any order.
 * The bands are trust alone; a point whose readiness is worse than its band (a high or critical cause)
 * is drawn as a ring and says why. Returns the chart and how many points are below their band.
 */
export function trustChart(points) {
  const sorted = [...points].sort((a, b) => a.time - b.time);
  const { x, y, right, plotWidth, axes } = frame(sorted[0].time, sorted[sorted.length - 1].time, "trust");
  const bands = BANDS.map((band) => [
    svg("rect", { x: MARGIN.left, y: y(band.to), width: plotWidth, height: y(band.from) - y(band.to), class: `band ${band.name}` }),
    svg("text", { x: right + 8, y: (y(band.to) + y(band.from)) / 2 + 4, class: `band-label ${band.name}` }, band.label),
  ]);
  const line = svg("polyline", { points: sorted.map((p) => `${x(p.time)},${y(p.trust)}`).join(" "), class: "trust-line" });
  let belowBand = 0;
  const dots = sorted.map((point) => {
    const reason = format.belowBandReason(point.trust, point.readiness);
    belowBand += reason ? 1 : 0;
    const why = reason ? ` (below its trust band: ${reason})` : "";
    return svg(
      "a",
      { href: runHref(point.runId), class: reason ? "trust-point below-band" : "trust-point" },
      svg("title", {}, `${point.runId}: trust ${point.trust}, ${format.humanize(point.readiness)}${why}, ${format.time(new Date(point.time).toISOString())}`),
      svg("circle", { cx: x(point.time), cy: y(point.trust), r: reason ? 6 : 5, class: format.readinessClass(point.readiness) }),
    );
  });
  const mean = sorted.reduce((sum, p) => sum + p.trust, 0) / sorted.length;
  const title = `Trust of ${sorted.length} runs over time, mean ${mean.toFixed(1)}; each point links to its run`;
  const picture = chart({ className: "time-chart trust-chart", titleId: "trust-chart-title", title }, bands, axes, line, dots);
  return { picture, belowBand };
}

/** The 90-day reputation of each day (null before there is any). days: the history API's `days`. */
export function reputationChart(days) {
  const time = (day) => Date.parse(`${day.day}T00:00:00Z`);
  const { x, y, right, axes } = frame(time(days[0]), time(days[days.length - 1]), "reputation");
  const scored = days.filter((day) => day.reputation !== null);
  // One line per stretch of days with a score, so a day without one shows as a gap.
  const stretches = [[]];
  for (const day of days) {
    if (day.reputation === null) stretches.push([]);
    else stretches[stretches.length - 1].push(day);
  }
  const lines = stretches
    .filter((stretch) => stretch.length > 0)
    .map((stretch) => svg("polyline", { points: stretch.map((d) => `${x(time(d))},${y(d.reputation)}`).join(" "), class: "reputation-line" }));
  const dots = scored.map((day) =>
    svg(
      "g",
      { class: "reputation-point" },
      svg("title", {}, `${day.day}: reputation ${format.score(day.reputation)}, confidence ${format.percent(day.confidence)}, ${day.runs} run${day.runs === 1 ? "" : "s"} that day`),
      svg("circle", { cx: x(time(day)), cy: y(day.reputation), r: 3 }),
    ),
  );
  const neutral = [
    svg("line", { x1: MARGIN.left, x2: right, y1: y(50), y2: y(50), class: "neutral-line" }),
    svg("text", { x: right + 8, y: y(50) + 4, class: "band-label neutral" }, "neutral 50"),
  ];
  const last = scored.at(-1);
  const title = last
    ? `Reputation over ${days.length} days, ${format.score(last.reputation)} on ${last.day}`
    : `No reputation in the last ${days.length} days`;
  return chart({ className: "time-chart reputation-chart", titleId: "reputation-chart-title", title }, neutral, axes, lines, dots);
}

// In px of the viewBox; `side` leaves room for the value next to a bar of the whole reach.
const CONTRIBUTION = { width: 400, side: 44, top: 4, caption: 19, bar: 12, barGap: 3, rowGap: 12, axis: 32, reach: 50 };
const CONTRIBUTION_TICKS = [-50, -25, 0, 25, 50];

/**
 * Horizontal bars either side of a zero line, a pair per row, on a fixed -50..+50 scale so that charts of
 * different categories compare. rows: [{ caption, bars: [{ series, points, title }] }]; each bar is
 * drawn in its series' class (its colour) with its signed value at its end.
 */
export function contributionChart(titleId, title, rows) {
  const { width, side, top, caption, bar, barGap, rowGap, axis, reach } = CONTRIBUTION;
  const x = (points) => side + ((points + reach) / (2 * reach)) * (width - 2 * side);
  const rowHeight = caption + 2 * bar + barGap + rowGap;
  const bottom = top + rows.length * rowHeight;
  const drawBar = ({ series, points, title: barTitle }, y) => {
    const end = x(points);
    const after = points >= 0;
    return svg(
      "g",
      { class: `contribution-bar ${series}` },
      svg("title", {}, barTitle),
      svg("rect", { x: Math.min(end, x(0)), y, width: Math.abs(end - x(0)), height: bar }),
      svg("text", { x: end + (after ? 4 : -4), y: y + bar - 2, "text-anchor": after ? "start" : "end", class: "bar-value" }, format.trend(points).text),
    );
  };
  const drawn = rows.map((row, index) => {
    const y = top + index * rowHeight;
    return [
      svg("text", { x: side, y: y + caption - 6, class: "bar-caption" }, row.caption),
      row.bars.map((one, slot) => drawBar(one, y + caption + slot * (bar + barGap))),
    ];
  });
  const scale = [
    svg("line", { x1: x(0), x2: x(0), y1: top, y2: bottom, class: "neutral-line" }),
    CONTRIBUTION_TICKS.map((points) =>
      svg("text", { x: x(points), y: bottom + 14, "text-anchor": "middle", class: "tick-label" }, points > 0 ? `+${points}` : points)),
    svg("text", { x: width / 2, y: bottom + 30, "text-anchor": "middle", class: "axis-label" }, "points above or below the neutral 50"),
  ];
  return chart({ className: "bar-chart contribution-chart", titleId, title, width, height: bottom + axis }, scale, drawn);
}
