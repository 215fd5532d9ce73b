// Charts of an agent: over time, trust per run in the lane of its readiness and the 90-day reputation per
// day; what each event type adds to a category score, now and 7 days ago; and the fleet's sparklines.

import { svg } from "./dom.js";
import * as format from "./format.js";
import { READY_TRUST, UNSAFE_TRUST_BELOW } from "./vocab.js";
import { runHref } from "./widgets.js";

const WIDTH = 760;
const HEIGHT = 280;
const MARGIN = { left: 44, right: 112, top: 14, bottom: 40 };
const SCORE_TICKS = [0, 20, 40, 60, 80, 100];
const TIME_TICKS = 5;
const INSET = 14; // keeps the first and last points off the axes, and a score of 0 or 100 off the frame
const DAY_MS = 86_400_000;

/**
 * One lane per readiness, best on top: a run is drawn in the lane of its verdict, at the height of its trust
 * within the trust that verdict admits (ready from 80, review from 60, unsafe from 0; a high or critical
 * cause makes a run review or unsafe whatever its trust, so review and unsafe reach 100).
 */
const LANES = [
  { name: "ready", level: "ready_for_runtime", from: READY_TRUST, label: "ready" },
  { name: "review", level: "review_recommended", from: UNSAFE_TRUST_BELOW, label: "review" },
  { name: "unsafe", level: "unsafe_for_production", from: 0, label: "unsafe" },
];
const LANE_GAP = 6;

const plotWidth = WIDTH - MARGIN.left - MARGIN.right;
const plotHeight = HEIGHT - MARGIN.top - MARGIN.bottom;
const right = MARGIN.left + plotWidth;
const bottom = MARGIN.top + plotHeight;

/** The x scale over [first, last] (ms) and the time axis below the plot. */
function timeAxis(first, last) {
  const x = (time) =>
    MARGIN.left + INSET + (last === first ? plotWidth / 2 - INSET : ((time - first) / (last - first)) * (plotWidth - 2 * INSET));
  const times = last === first ? [first] : Array.from({ length: TIME_TICKS }, (_, i) => first + ((last - first) * i) / (TIME_TICKS - 1));
  const ticks = times.map((time) => {
    const iso = new Date(time).toISOString();
    const label = last - first < 2 * DAY_MS ? iso.slice(5, 16).replace("T", " ") : iso.slice(0, 10);
    return svg("text", { x: x(time), y: HEIGHT - MARGIN.bottom + 18, class: "tick-label", "text-anchor": "middle" }, label);
  });
  return { x, axis: [svg("line", { x1: MARGIN.left, x2: right, y1: bottom, y2: bottom, class: "axis" }), ticks] };
}

/** A y scale from `from` (at `low` px) to 100 (at `high` px), with its ticks on the left axis. */
function scoreScale(from, low, high, ticks) {
  const y = (value) => low - ((value - from) / (100 - from)) * (low - high);
  const marks = ticks.map((value) => [
    svg("line", { x1: MARGIN.left - 4, x2: MARGIN.left, y1: y(value), y2: y(value), class: "tick" }),
    svg("text", { x: MARGIN.left - 8, y: y(value) + 4, class: "tick-label", "text-anchor": "end" }, value),
  ]);
  return { y, marks };
}

const yAxis = (label) => [
  svg("line", { x1: MARGIN.left, x2: MARGIN.left, y1: MARGIN.top, y2: bottom, class: "axis" }),
  svg("text", { x: 12, y: MARGIN.top + plotHeight / 2, class: "axis-label", transform: `rotate(-90 12 ${MARGIN.top + plotHeight / 2})`, "text-anchor": "middle" }, label),
];

function chart({ className, titleId, title, width = WIDTH, height = HEIGHT }, ...children) {
  return svg(
    "svg",
    { viewBox: `0 0 ${width} ${height}`, role: "group", "aria-labelledby": titleId, class: className },
    svg("title", { id: titleId }, title),
    children,
  );
}

/**
 * Trust per run, each run in the lane of its readiness. points: [{ runId, time (ms), trust, readiness }] in
 * any order. A run whose trust alone would put it in a better lane (a high or critical cause lowered its
 * verdict) is drawn as a ring and says why. Returns the chart and how many runs are such.
 */
export function trustChart(points) {
  const sorted = [...points].sort((a, b) => a.time - b.time);
  const { x, axis } = timeAxis(sorted[0].time, sorted[sorted.length - 1].time);
  const laneHeight = (plotHeight - LANE_GAP * (LANES.length - 1)) / LANES.length;
  const lanes = LANES.map((lane, index) => {
    const top = MARGIN.top + index * (laneHeight + LANE_GAP);
    const scale = scoreScale(lane.from, top + laneHeight - INSET / 2, top + INSET / 2, [lane.from, 100]);
    return { ...lane, top, ...scale };
  });
  const laneOf = (readiness) => lanes.find((lane) => lane.level === readiness) ?? lanes[lanes.length - 1];
  const drawnLanes = lanes.map((lane) => [
    svg("rect", { x: MARGIN.left, y: lane.top, width: plotWidth, height: laneHeight, class: `band ${lane.name}`, "data-lane": lane.level }),
    svg("text", { x: right + 8, y: lane.top + laneHeight / 2 + 4, class: `band-label ${lane.name}` }, lane.label),
    lane.marks,
  ]);
  let belowBand = 0;
  const dots = sorted.map((point) => {
    const reason = format.belowBandReason(point.trust, point.readiness);
    belowBand += reason ? 1 : 0;
    const why = reason ? ` (its trust alone would be ${format.trustBand(point.trust)}: ${reason})` : "";
    return svg(
      "a",
      { href: runHref(point.runId), class: reason ? "trust-point below-band" : "trust-point" },
      svg("title", {}, `${point.runId}: trust ${point.trust}, ${format.humanize(point.readiness)}${why}, ${format.time(new Date(point.time).toISOString())}`),
      svg("circle", { cx: x(point.time), cy: laneOf(point.readiness).y(point.trust), r: reason ? 6 : 5, class: format.readinessClass(point.readiness) }),
    );
  });
  const counts = LANES.map((lane) => `${sorted.filter((p) => p.readiness === lane.level).length} ${lane.name}`).join(", ");
  const title = `Trust of ${sorted.length} runs over time by readiness (${counts}); each point links to its run`;
  const picture = chart({ className: "time-chart trust-chart", titleId: "trust-chart-title", title }, drawnLanes, yAxis("trust"), axis, dots);
  return { picture, belowBand };
}

/** The 90-day reputation of each day (null before there is any). days: the history API's `days`. */
export function reputationChart(days) {
  const time = (day) => Date.parse(`${day.day}T00:00:00Z`);
  const { x, axis } = timeAxis(time(days[0]), time(days[days.length - 1]));
  // 0 and 100 lie INSET inside the frame, so a score of 0 is a line of its own above the time axis.
  const { y, marks } = scoreScale(0, bottom - INSET, MARGIN.top + INSET, SCORE_TICKS);
  const axes = [yAxis("reputation"), marks, axis];
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

// In px of the viewBox: the trust line over the top, a strip at the bottom for execution-error ticks.
const SPARK = { width: 100, height: 26, pad: 2, strip: 5, days: 30 };

/**
 * A fleet row's last 30 days: each day's mean trust of its quality runs as a line, its point red on a day
 * with an unsafe run (whatever the trust: a critical cause makes a run unsafe at trust 90), else in the
 * colour of the trust's band; and a dark tick below each day that had execution errors. days: the API's
 * last_30_days (days with runs only), today: "YYYY-MM-DD".
 */
export function sparkline(days, today) {
  const { width, height, pad, strip, days: span } = SPARK;
  const end = Date.parse(`${today}T00:00:00Z`);
  const placed = days
    .map((day) => ({ ...day, slot: span - 1 - Math.round((end - Date.parse(`${day.day}T00:00:00Z`)) / DAY_MS) }))
    .filter((day) => day.slot >= 0 && day.slot < span);
  const x = (slot) => pad + (slot * (width - 2 * pad)) / (span - 1);
  const y = (trust) => pad + (1 - trust / 100) * (height - 2 * pad - strip);
  const judged = placed.filter((day) => day.mean_trust !== null);
  const runs = placed.reduce((sum, day) => sum + day.runs, 0);
  const errors = placed.reduce((sum, day) => sum + day.execution_errors, 0);
  const title = runs === 0
    ? "No runs in the last 30 days"
    : `Last 30 days: ${runs} run${runs === 1 ? "" : "s"} on ${placed.length} day${placed.length === 1 ? "" : "s"}, ` +
      `${errors} execution error${errors === 1 ? "" : "s"}, ${placed.reduce((sum, day) => sum + day.unsafe_runs, 0)} unsafe` +
      (judged.length ? `; daily mean trust ${Math.min(...judged.map((d) => d.mean_trust)).toFixed(0)}–${Math.max(...judged.map((d) => d.mean_trust)).toFixed(0)}` : "");
  return svg(
    "svg",
    { viewBox: `0 0 ${width} ${height}`, width, height, role: "img", "aria-label": title, class: "sparkline" },
    svg("title", {}, title),
    svg("line", { x1: pad, x2: width - pad, y1: y(0), y2: y(0), class: "spark-base" }),
    judged.length > 1 && svg("polyline", { points: judged.map((d) => `${x(d.slot)},${y(d.mean_trust)}`).join(" "), class: "spark-line" }),
    judged.map((d) =>
      svg("circle", { cx: x(d.slot), cy: y(d.mean_trust), r: 2, class: `spark-point ${d.unsafe_runs > 0 ? "unsafe" : format.trustBand(d.mean_trust)}` })),
    placed.filter((d) => d.execution_errors > 0).map((d) =>
      svg("rect", { x: x(d.slot) - 1.5, y: height - strip + 1, width: 3, height: strip - 1, class: "spark-error" })),
  );
}
