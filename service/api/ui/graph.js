// The causal graph of a run as an SVG: events left to right in time order on an axis (`precedes`),
// failure nodes above them, a `causes` curve from each evidence event up to its failure, and
// `reinforces` arcs under the axis between consecutive evidence events of one failure.

import { svg } from "./dom.js";
import * as format from "./format.js";

const MAX_EVENT_NODES = 150;
const STEP = 64; // px between consecutive events
const PAD = 56;
const BOX = { width: 176, height: 46, gap: 16, top: 16 };
const NODE_RADIUS = 8;
const LABEL_OFFSET = 74; // from the axis down to the event labels, leaving room for the arcs
const LABEL_ROOM = 150;
const LABEL_CHARS = 34;

const VALUE_CHARS = 24;

const truncate = (text, length) => (text.length > length ? `${text.slice(0, length - 1)}…` : text);
const slotOf = (type) => `slot-${format.failureSlot(type)}`;

/** An argument's value at a glance: URLs without their scheme, long text cut, nested values elided. */
function shortValue(value) {
  if (value === null || typeof value !== "object") return truncate(String(value).replace(/^https?:\/\//, ""), VALUE_CHARS);
  return Array.isArray(value) ? "[…]" : "{…}";
}

/**
 * A node's label as a person reads it: the engine's `tool:{"url":"https://a/b"}` becomes
 * `tool(url=a/b)`; any other label is kept.
 */
export function readableLabel(label) {
  const start = label.indexOf(":{");
  if (start < 0) return label;
  let args;
  try {
    args = JSON.parse(label.slice(start + 1));
  } catch {
    return label.slice(0, start);
  }
  const shown = Object.entries(args).map(([name, value]) => `${name}=${shortValue(value)}`);
  return `${label.slice(0, start)}(${shown.join(", ")})`;
}

/** A pie of equal wedges, one per failure type, for an event that is evidence of several. */
function wedges(x, y, types) {
  return types.map((type, index) => {
    const [from, to] = [index, index + 1].map((i) => -Math.PI / 2 + (2 * Math.PI * i) / types.length);
    const [x1, y1, x2, y2] = [x + NODE_RADIUS * Math.cos(from), y + NODE_RADIUS * Math.sin(from), x + NODE_RADIUS * Math.cos(to), y + NODE_RADIUS * Math.sin(to)];
    const large = to - from > Math.PI ? 1 : 0;
    return svg("path", { d: `M${x},${y} L${x1},${y1} A${NODE_RADIUS},${NODE_RADIUS} 0 ${large} 1 ${x2},${y2} Z`, class: `graph-wedge ${slotOf(type)}` });
  });
}

/** Event id -> the failure types it is evidence of, in cause order. */
export function failureTypesByEvent(causes) {
  const types = new Map();
  for (const cause of causes) {
    for (const id of cause.evidence) types.set(id, [...(types.get(id) ?? []), cause.type]);
  }
  return types;
}

/** Where things go: the axis sits under the failure row, or near the top when there is none. */
function geometry(hasFailures) {
  const axisY = hasFailures ? 200 : 40;
  const labelY = axisY + LABEL_OFFSET;
  return { axisY, labelY, height: labelY + LABEL_ROOM };
}

/**
 * The events to draw: all of them when there are few; otherwise the evidence events plus the first
 * and the last, so a long run still shows where its failures come from.
 */
function eventsToDraw(events, evidenceIds) {
  if (events.length <= MAX_EVENT_NODES) return events;
  const last = events.length - 1;
  return events.filter((node, index) => index === 0 || index === last || evidenceIds.has(node.id)).slice(0, MAX_EVENT_NODES);
}

/** Failure boxes centred over their evidence, pushed right where they would overlap. */
function placeFailures(causes, eventX) {
  const boxes = causes.map((cause) => {
    const xs = cause.evidence.map((id) => eventX.get(id)).filter((x) => x !== undefined);
    const centre = xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : PAD;
    return { cause, x: Math.max(PAD - NODE_RADIUS, centre - BOX.width / 2) };
  });
  boxes.sort((a, b) => a.x - b.x);
  for (let i = 1; i < boxes.length; i += 1) {
    boxes[i].x = Math.max(boxes[i].x, boxes[i - 1].x + BOX.width + BOX.gap);
  }
  return boxes;
}

function failureBox({ cause, x }) {
  return svg(
    "g",
    { class: `graph-failure ${slotOf(cause.type)}` },
    svg("title", {}, `${cause.type}: ${cause.description}`),
    svg("rect", { x, y: BOX.top, width: BOX.width, height: BOX.height, rx: 6 }),
    svg("text", { x: x + 10, y: BOX.top + 19, class: "graph-failure-name" }, format.humanize(cause.type)),
    svg("text", { x: x + 10, y: BOX.top + 36, class: "graph-failure-meta" }, `${cause.severity} · impact ${cause.impact_score}`),
  );
}

function eventNode(node, index, x, failureTypes, { axisY, labelY }) {
  const label = `#${index} ${readableLabel(node.label)}`;
  const evidenceOf = failureTypes.length ? `\nevidence of ${failureTypes.join(", ")}` : "";
  const kind = failureTypes.length > 1 ? "graph-event evidence several" : failureTypes.length ? `graph-event evidence ${slotOf(failureTypes[0])}` : "graph-event";
  return svg(
    "g",
    { class: kind, "data-failures": failureTypes.join(" ") || null },
    svg("title", {}, `#${index} ${node.label} (${node.id}, ${node.type})${evidenceOf}`),
    failureTypes.length > 1 && wedges(x, axisY, failureTypes),
    svg("circle", { cx: x, cy: axisY, r: NODE_RADIUS }),
    svg("text", { x, y: labelY, transform: `rotate(38 ${x} ${labelY})`, class: "graph-label" }, truncate(label, LABEL_CHARS)),
  );
}

/** The axis: a `precedes` segment between drawn neighbours, dotted where events were left out. */
function axisSegments(drawn, eventX, edges, { axisY }) {
  const precedes = new Set(edges.filter((edge) => edge.type === "precedes").map((edge) => `${edge.from}\u0000${edge.to}`));
  const segments = drawn.slice(1).map((node, i) => {
    const previous = drawn[i];
    const joined = precedes.has(`${previous.id}\u0000${node.id}`);
    return svg("line", {
      x1: eventX.get(previous.id), y1: axisY, x2: eventX.get(node.id), y2: axisY,
      class: joined ? "graph-precedes" : "graph-precedes elided",
    });
  });
  const lastX = eventX.get(drawn[drawn.length - 1].id);
  return [
    segments,
    svg("line", { x1: lastX, y1: axisY, x2: lastX + 90, y2: axisY, class: "graph-time-arrow", "marker-end": "url(#graph-arrow)" }),
    svg("text", { x: lastX + 96, y: axisY + 4, class: "graph-axis-label" }, "time"),
    svg("defs", {},
      svg("marker", { id: "graph-arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto" },
        svg("path", { d: "M0,0 L10,5 L0,10 z", class: "graph-arrow-head" }))),
  ];
}

/** `causes`: a curve from the top of each evidence event up to the bottom of its failure box. */
function causesCurves(edges, eventX, boxX, { axisY }) {
  return edges
    .filter((edge) => edge.type === "causes" && eventX.has(edge.from) && boxX.has(edge.to))
    .map((edge) => {
      const [x1, y1, x2, y2] = [eventX.get(edge.from), axisY - NODE_RADIUS, boxX.get(edge.to), BOX.top + BOX.height];
      const middle = (y1 + y2) / 2;
      return svg("path", {
        d: `M${x1},${y1} C${x1},${middle} ${x2},${middle} ${x2},${y2}`,
        class: `graph-causes ${slotOf(edge.to.replace(/^failure_/, ""))}`,
      });
    });
}

/** `reinforces`: arcs under the axis, one depth per failure so their arcs stay apart. */
function reinforcesArcs(edges, eventX, causes, { axisY }) {
  return edges
    .filter((edge) => edge.type === "reinforces" && eventX.has(edge.from) && eventX.has(edge.to))
    .map((edge) => {
      const [x1, x2, y] = [eventX.get(edge.from), eventX.get(edge.to), axisY + NODE_RADIUS];
      const owner = causes.findIndex((cause) => cause.evidence.includes(edge.from) && cause.evidence.includes(edge.to));
      const depth = 2 * (22 + 8 * owner);
      return svg("path", {
        d: `M${x1},${y} Q${(x1 + x2) / 2},${y + depth} ${x2},${y}`,
        class: `graph-reinforces ${slotOf(causes[owner]?.type)}`,
      });
    });
}

/**
 * graph: the diagnosis' causal_graph ({nodes, edges: [{from, to, type}]}); causes: its
 * failure_causes. Returns the SVG at a fixed, readable scale and a one-line summary of it.
 */
export function causalGraph(graph, causes) {
  const failureIds = new Set(causes.map((cause) => `failure_${cause.type}`));
  const events = graph.nodes.filter((node) => !failureIds.has(node.id));
  const indexOf = new Map(events.map((node, index) => [node.id, index]));
  const failureTypesOf = failureTypesByEvent(causes);
  const drawn = eventsToDraw(events, new Set(failureTypesOf.keys()));
  const eventX = new Map(drawn.map((node, position) => [node.id, PAD + position * STEP]));
  const boxes = placeFailures(causes, eventX);
  const boxX = new Map(boxes.map(({ cause, x }) => [`failure_${cause.type}`, x + BOX.width / 2]));
  const layout = geometry(causes.length > 0);
  const width = Math.max(PAD * 2 + (drawn.length - 1) * STEP + 160, ...boxes.map(({ x }) => x + BOX.width + PAD));

  const shown = drawn.length < events.length ? `${drawn.length} of ${events.length} events (evidence, first and last)` : `${events.length} events`;
  const failures = causes.length
    ? causes.map((cause) => `${cause.type} from ${cause.evidence.length} evidence events`).join("; ")
    : "no failure detected";
  const summary = `${shown} in time order; ${failures}.`;
  const picture = svg(
    "svg",
    { width, height: layout.height, viewBox: `0 0 ${width} ${layout.height}`, role: "img", "aria-labelledby": "graph-title graph-desc", class: "causal-graph" },
    svg("title", { id: "graph-title" }, "Causal graph"),
    svg("desc", { id: "graph-desc" }, summary),
    drawn.length > 0 && axisSegments(drawn, eventX, graph.edges, layout),
    reinforcesArcs(graph.edges, eventX, causes, layout),
    causesCurves(graph.edges, eventX, boxX, layout),
    boxes.map(failureBox),
    drawn.map((node) => eventNode(node, indexOf.get(node.id), eventX.get(node.id), failureTypesOf.get(node.id) ?? [], layout)),
  );
  return { picture, summary };
}
