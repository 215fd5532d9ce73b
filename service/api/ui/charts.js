// Trust per run over time, on the readiness bands (>= 80 ready, 60-80 review, < 60 unsafe).

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
const TRUST_TICKS = [0, 20, 40, 60, 80, 100];
const TIME_TICKS = 5;
const INSET = 14; // keeps the first and last points off the axes

/** points: [{ runId, time (ms), trust, readiness }] in any order. */
export function trustChart(points) {
  const sorted = [...points].sort((a, b) => a.time - b.time);
  const first = sorted[0].time;
  const last = sorted[sorted.length - 1].time;
  const plotWidth = WIDTH - MARGIN.left - MARGIN.right;
  const plotHeight = HEIGHT - MARGIN.top - MARGIN.bottom;
  const x = (time) =>
    MARGIN.left + INSET + (last === first ? plotWidth / 2 - INSET : ((time - first) / (last - first)) * (plotWidth - 2 * INSET));
  const y = (trust) => MARGIN.top + (1 - trust / 100) * plotHeight;
  const right = MARGIN.left + plotWidth;

  const bands = BANDS.map((band) => [
    svg("rect", { x: MARGIN.left, y: y(band.to), width: plotWidth, height: y(band.from) - y(band.to), class: `band ${band.name}` }),
    svg("text", { x: right + 8, y: (y(band.to) + y(band.from)) / 2 + 4, class: `band-label ${band.name}` }, band.label),
  ]);
  const trustTicks = TRUST_TICKS.map((trust) => [
    svg("line", { x1: MARGIN.left - 4, x2: MARGIN.left, y1: y(trust), y2: y(trust), class: "tick" }),
    svg("text", { x: MARGIN.left - 8, y: y(trust) + 4, class: "tick-label", "text-anchor": "end" }, trust),
  ]);
  const times = last === first ? [first] : Array.from({ length: TIME_TICKS }, (_, i) => first + ((last - first) * i) / (TIME_TICKS - 1));
  const timeTicks = times.map((time) => {
    const iso = new Date(time).toISOString();
    const label = last - first < 2 * 86_400_000 ? iso.slice(5, 16).replace("T", " ") : iso.slice(0, 10);
    return svg("text", { x: x(time), y: HEIGHT - MARGIN.bottom + 18, class: "tick-label", "text-anchor": "middle" }, label);
  });
  const line = svg("polyline", { points: sorted.map((p) => `${x(p.time)},${y(p.trust)}`).join(" "), class: "trust-line" });
  const dots = sorted.map((point) =>
    svg(
      "a",
      { href: runHref(point.runId), class: "trust-point" },
      svg("title", {}, `${point.runId}: trust ${point.trust}, ${format.humanize(point.readiness)}, ${format.time(new Date(point.time).toISOString())}`),
      svg("circle", { cx: x(point.time), cy: y(point.trust), r: 5, class: format.readinessClass(point.readiness) }),
    ),
  );
  const mean = sorted.reduce((sum, p) => sum + p.trust, 0) / sorted.length;
  return svg(
    "svg",
    { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: "group", "aria-labelledby": "trust-chart-title", class: "trust-chart" },
    svg("title", { id: "trust-chart-title" }, `Trust of ${sorted.length} runs over time, mean ${mean.toFixed(1)}; each point links to its run`),
    bands,
    svg("line", { x1: MARGIN.left, x2: MARGIN.left, y1: MARGIN.top, y2: MARGIN.top + plotHeight, class: "axis" }),
    svg("line", { x1: MARGIN.left, x2: right, y1: MARGIN.top + plotHeight, y2: MARGIN.top + plotHeight, class: "axis" }),
    trustTicks,
    timeTicks,
    svg("text", { x: 12, y: MARGIN.top + plotHeight / 2, class: "axis-label", transform: `rotate(-90 12 ${MARGIN.top + plotHeight / 2})`, "text-anchor": "middle" }, "trust"),
    line,
    dots,
  );
}
