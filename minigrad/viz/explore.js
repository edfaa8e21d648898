// minigrad explore: the page's behaviour (copied into every page by minigrad/viz/explore.py).
//
// The data (one JSON object, written by explore.py) holds the step's tensors as `nodes` (ops, parameters,
// inputs), the module calls as nested `groups`, `edges` from each input to the op that used it with the
// norm of the gradient passed back along it, the backward `walk` in the engine's order, the `formulas`
// read from each op's source, the `heatmaps` (one byte a cell) and the `attention` blocks.
//
// The graph is laid out here, with no library: each open group is laid out on its own in layers (every
// edge points down), then placed as one box in its parent's layout. Opening or closing a group lays the
// whole graph out again, which takes milliseconds for the few hundred ops of a toy model.
"use strict";

const D = JSON.parse(document.getElementById("step-data").textContent);
const SVG_NS = "http://www.w3.org/2000/svg";
const NODE_H = 28, GROUP_H = 38, GAP_X = 16, GAP_Y = 24, PAD = 10, HEADER = 20;

// ---- the model's structure ---------------------------------------------------------------------
const childGroups = D.groups.map(() => []);
const members = D.groups.map(() => []);
D.groups.forEach(g => { if (g.parent !== null) childGroups[g.parent].push(g.id); });
D.nodes.forEach(n => members[n.group].push(n.id));
const opCount = D.groups.map(() => 0);
D.nodes.forEach(n => { if (n.kind === "op") for (let g = n.group; g !== null; g = D.groups[g].parent) opCount[g]++; });
const failedIn = D.groups.map(() => 0);
D.nodes.forEach(n => {
  if (n.kind === "op" && n.check && n.check.ok === false)
    for (let g = n.group; g !== null; g = D.groups[g].parent) failedIn[g]++;
});

const state = {
  expanded: new Set([0].concat(childGroups[0].filter(g => D.groups[g].path === ""))),  // the top level and the model
  selected: null,   // {node: id} or {group: id}
  walk: -1,         // position in D.walk; -1: not walking
  positions: {},    // unit key -> {x, y, w, h} in graph coordinates, from the last layout
  view: {x: 0, y: 0, k: 1},
};

function ancestors(group) {
  const out = [];
  for (let g = group; g !== null; g = D.groups[g].parent) out.unshift(g);
  return out;
}

function groupName(g) {
  const group = D.groups[g];
  let name = group.label + (group.kind ? ": " + group.kind : "");
  if (group.call) name += " (call " + group.call + ")";
  return name;
}

// The unit that shows node `id` now: the node itself, or the outermost closed group around it.
function unitOf(id) {
  for (const g of ancestors(D.nodes[id].group)) if (!state.expanded.has(g)) return "g" + g;
  return "n" + id;
}

// The child of group `g` (a node or a group, as a unit key) that holds node `id`, or null if outside g.
function childOf(g, id) {
  const chain = ancestors(D.nodes[id].group);
  const at = chain.indexOf(g);
  if (at < 0) return null;
  return at === chain.length - 1 ? "n" + id : "g" + chain[at + 1];
}

// ---- small helpers -----------------------------------------------------------------------------
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (v !== null && v !== undefined) e.setAttribute(k, v);
  }
  for (const c of children.flat(Infinity)) if (c !== null && c !== undefined) e.append(c instanceof Node ? c : String(c));
  return e;
}

function svg(tag, attrs, ...children) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const c of children) e.append(c);
  return e;
}

function num(x) {
  if (x === null || x === undefined) return "-";
  if (x === 0) return "0";
  const a = Math.abs(x);
  return (a >= 1e4 || a < 1e-3) ? x.toExponential(2) : x.toPrecision(4).replace(/\.?0+$/, "");
}

const plural = (n, word) => n + " " + word + (n === 1 ? "" : "s");
const shapeText = s => "(" + s.join(", ") + (s.length === 1 ? ",)" : ")");
const textWidth = text => 14 + 6.4 * text.length;

// A node's two lines in the graph; a parameter is named from inside its box (in_proj_weight, not its full path).
function nodeLabel(n) {
  const inside = D.groups[n.group].path;
  const name = n.kind === "param" && inside && n.label.startsWith(inside + ".") ? n.label.slice(inside.length + 1) : n.label;
  return [name, shapeText(n.shape)];
}

// ---- layout ------------------------------------------------------------------------------------
// Lay out the open group g: returns {w, h, items: [{key, x, y, w, h, inner}]}, coordinates inside g.
function layoutGroup(g) {
  const units = [];
  const seen = new Set();
  for (const id of members[g]) units.push("n" + id);
  for (const c of childGroups[g]) units.push("g" + c);
  const sizes = {}, inner = {};
  for (const key of units) {
    if (key[0] === "n") {
      const [a, b] = nodeLabel(D.nodes[+key.slice(1)]);
      sizes[key] = {w: Math.max(textWidth(a), textWidth(b)), h: NODE_H};
    } else {
      const c = +key.slice(1);
      if (state.expanded.has(c)) {
        inner[key] = layoutGroup(c);
        sizes[key] = {w: Math.max(inner[key].w + 2 * PAD, textWidth(groupName(c)) + 20),
                      h: inner[key].h + 2 * PAD + HEADER};
      } else {
        sizes[key] = {w: Math.max(textWidth(groupName(c)), textWidth(plural(opCount[c], "op"))), h: GROUP_H};
      }
    }
  }
  // edges between the units of this level
  const succ = {}, pred = {};
  units.forEach(u => { succ[u] = []; pred[u] = []; });
  for (const [a, b] of D.edges) {
    const ua = childOf(g, a), ub = childOf(g, b);
    if (ua === null || ub === null || ua === ub) continue;
    const k = ua + ">" + ub;
    if (seen.has(k)) continue;
    seen.add(k);
    succ[ua].push(ub);
    pred[ub].push(ua);
  }
  // layers: longest path from the sources (Kahn's order; a cycle, which per-call groups prevent, is cut)
  const layer = {}, indegree = {};
  units.forEach(u => { indegree[u] = pred[u].length; layer[u] = 0; });
  const queue = units.filter(u => indegree[u] === 0);
  const done = new Set();
  while (done.size < units.length) {
    if (!queue.length) queue.push(units.find(u => !done.has(u)));  // cut a cycle
    const u = queue.shift();
    if (done.has(u)) continue;
    done.add(u);
    for (const v of succ[u]) {
      if (done.has(v)) continue;
      layer[v] = Math.max(layer[v], layer[u] + 1);
      if (--indegree[v] === 0) queue.push(v);
    }
  }
  const layers = [];
  units.forEach(u => { (layers[layer[u]] = layers[layer[u]] || []).push(u); });
  for (let i = 0; i < layers.length; i++) layers[i] = layers[i] || [];
  // order within layers: a few barycentre sweeps, down then up
  const pos = {};
  const place = () => layers.forEach(l => l.forEach((u, i) => { pos[u] = i; }));
  place();
  const bary = (u, nbrs) => nbrs.length ? nbrs.reduce((s, v) => s + pos[v], 0) / nbrs.length : pos[u];
  for (let sweep = 0; sweep < 4; sweep++) {
    for (let i = 1; i < layers.length; i++) {
      const keys = Object.fromEntries(layers[i].map(u => [u, bary(u, pred[u])]));
      layers[i].sort((a, b) => keys[a] - keys[b]);
      place();
    }
    for (let i = layers.length - 2; i >= 0; i--) {
      const keys = Object.fromEntries(layers[i].map(u => [u, bary(u, succ[u])]));
      layers[i].sort((a, b) => keys[a] - keys[b]);
      place();
    }
  }
  // x: each unit under the mean of its predecessors, pushed right where it would overlap its neighbour
  const x = {};
  layers.forEach(l => { let at = 0; l.forEach(u => { x[u] = at; at += sizes[u].w + GAP_X; }); });
  for (let sweep = 0; sweep < 3; sweep++) {
    for (let i = 0; i < layers.length; i++) {
      let right = -Infinity;
      for (const u of layers[i]) {
        const nbrs = pred[u].length ? pred[u] : succ[u];
        let want = x[u];
        if (nbrs.length) want = nbrs.reduce((s, v) => s + x[v] + sizes[v].w / 2, 0) / nbrs.length - sizes[u].w / 2;
        x[u] = Math.max(want, right + GAP_X);
        right = x[u] + sizes[u].w;
      }
    }
  }
  const minX = units.length ? Math.min(...units.map(u => x[u])) : 0;  // the sweeps may leave room on the left
  let y = 0, width = 0;
  const items = [];
  for (const l of layers) {
    const h = Math.max(0, ...l.map(u => sizes[u].h));
    for (const u of l) {
      items.push({key: u, x: x[u] - minX, y: y, w: sizes[u].w, h: sizes[u].h, inner: inner[u] || null});
      width = Math.max(width, x[u] - minX + sizes[u].w);
    }
    y += h + GAP_Y;
  }
  return {w: width, h: Math.max(0, y - GAP_Y), items: items};
}

// ---- drawing -----------------------------------------------------------------------------------
const viewport = document.getElementById("viewport");
const svgRoot = document.getElementById("graph-svg");

function render() {
  const t0 = performance.now();
  const top = layoutGroup(0);
  viewport.replaceChildren();
  const boxes = svg("g", {class: "boxes"}), edgeLayer = svg("g", {class: "edges"}), unitLayer = svg("g", {class: "units"});
  viewport.append(boxes, edgeLayer, unitLayer);
  state.positions = {};
  const draw = (layout, ox, oy) => {
    for (const it of layout.items) {
      const X = ox + it.x, Y = oy + it.y;
      state.positions[it.key] = {x: X, y: Y, w: it.w, h: it.h};
      if (it.inner) {
        const g = +it.key.slice(1);
        const box = svg("g", {class: "box", "data-group": g, "data-path": D.groups[g].path});
        const band = svg("rect", {class: "header-band", x: X, y: Y, width: it.w, height: HEADER, rx: 7});
        const title = svg("text", {class: "header", x: X + 8, y: Y + 14});
        title.textContent = "\u25BE " + groupName(g) + "  \u00B7 " + plural(opCount[g], "op");
        box.append(svg("rect", {x: X, y: Y, width: it.w, height: it.h}), band, title);
        box.addEventListener("click", e => { e.stopPropagation(); toggleGroup(g, false); });
        boxes.append(box);
        draw(it.inner, X + PAD + (it.w - 2 * PAD - it.inner.w) / 2, Y + HEADER + PAD);
      } else {
        unitLayer.append(drawUnit(it.key, X, Y, it.w, it.h));
      }
    }
  };
  draw(top, 0, 0);
  drawEdges(edgeLayer);
  state.graphSize = {w: top.w, h: top.h};
  markStates();
  renderTree();
  applyView();
  return performance.now() - t0;
}

function drawUnit(key, x, y, w, h) {
  const g = svg("g", {class: "unit", transform: `translate(${x},${y})`});
  g.append(svg("rect", {width: w, height: h, rx: 5}));
  let lines;
  if (key[0] === "n") {
    const n = D.nodes[+key.slice(1)];
    g.classList.add(n.kind);
    if (n.id === D.root) g.classList.add("root");
    if (n.kind === "op" && n.check && n.check.ok === false) g.classList.add("failed");
    g.setAttribute("data-node", n.id);
    if (n.op) g.setAttribute("data-op", n.op);
    lines = nodeLabel(n);
    g.addEventListener("click", e => { e.stopPropagation(); select({node: n.id}); });
  } else {
    const c = +key.slice(1);
    g.classList.add("group", "collapsed");
    if (failedIn[c]) g.classList.add("failed");
    g.setAttribute("data-group", c);
    g.setAttribute("data-path", D.groups[c].path);
    lines = ["\u25B8 " + groupName(c), plural(opCount[c], "op") + (failedIn[c] ? ", " + failedIn[c] + " failed" : "")];
    g.addEventListener("click", e => { e.stopPropagation(); toggleGroup(c, true); });
  }
  lines.forEach((line, i) => {
    const t = svg("text", {x: w / 2, y: h / 2 + (i - (lines.length - 1) / 2) * 12 + 4, "text-anchor": "middle"});
    t.textContent = line;
    g.append(t);
  });
  return g;
}

const logNorms = D.edges.filter(e => e[2] > 0).map(e => Math.log10(e[2]));
const LOG_LO = logNorms.length ? Math.min(...logNorms) : 0, LOG_HI = logNorms.length ? Math.max(...logNorms) : 1;

function edgeWidth(norm) {
  if (!(norm > 0)) return 1;
  const t = LOG_HI > LOG_LO ? (Math.log10(norm) - LOG_LO) / (LOG_HI - LOG_LO) : 1;
  return 0.8 + 5.2 * t;
}

function drawEdges(layer) {
  const drawn = {};
  for (const [a, b, norm] of D.edges) {
    const ua = unitOf(a), ub = unitOf(b);
    if (ua === ub) continue;
    const k = ua + ">" + ub;
    if (!drawn[k]) drawn[k] = {ua: ua, ub: ub, norm: null, pairs: []};
    if (norm !== null) drawn[k].norm = Math.max(drawn[k].norm || 0, norm);
    drawn[k].pairs.push([a, b]);
  }
  for (const e of Object.values(drawn)) {
    const p = state.positions[e.ua], q = state.positions[e.ub];
    if (!p || !q) continue;
    const x1 = p.x + p.w / 2, y1 = p.y + p.h, x2 = q.x + q.w / 2, y2 = q.y;
    const bend = Math.max(20, Math.abs(y2 - y1) / 2);
    const path = svg("path", {
      class: "edge" + (e.norm ? "" : " nograd"), "stroke-width": edgeWidth(e.norm),
      d: `M${x1},${y1} C${x1},${y1 + bend} ${x2},${y2 - bend} ${x2},${y2}`,
      "data-from": e.ua, "data-to": e.ub,
    });
    const tip = svg("title");
    tip.textContent = e.norm === null ? "no gradient along this edge" : "|gradient passed back| = " + num(e.norm);
    path.append(tip);
    layer.append(path);
  }
}

function markStates() {
  const visited = new Set(state.walk >= 0 ? D.walk.slice(0, state.walk + 1).map(unitOf) : []);
  const current = state.walk >= 0 ? unitOf(D.walk[state.walk]) : null;
  const selected = state.selected ? (state.selected.node !== undefined ? unitOf(state.selected.node)
                                                                       : "g" + state.selected.group) : null;
  viewport.querySelectorAll(".unit").forEach(u => {
    const key = u.dataset.node !== undefined ? "n" + u.dataset.node : "g" + u.dataset.group;
    u.classList.toggle("visited", visited.has(key));
    u.classList.toggle("current", key === current);
    u.classList.toggle("selected", key === selected);
  });
  viewport.querySelectorAll(".edge").forEach(p => p.classList.toggle("flow", p.dataset.to === current));
}

// ---- pan and zoom ------------------------------------------------------------------------------
function applyView() {
  const v = state.view;
  viewport.setAttribute("transform", `translate(${v.x},${v.y}) scale(${v.k})`);
}

function fitTo(box, maxScale) {
  const r = svgRoot.getBoundingClientRect();
  const k = Math.min(maxScale || 1, (r.width - 40) / Math.max(box.w, 1), (r.height - 40) / Math.max(box.h, 1));
  state.view = {k: k, x: r.width / 2 - (box.x + box.w / 2) * k, y: r.height / 2 - (box.y + box.h / 2) * k};
  applyView();
}

// An opened group: its top centred in view, as wide as fits, but never so small that its labels cannot be read.
function showTopOf(box) {
  const r = svgRoot.getBoundingClientRect();
  const k = Math.max(0.55, Math.min(1, (r.width - 40) / Math.max(box.w, 1), (r.height - 40) / Math.max(box.h, 1)));
  state.view = {k: k, x: r.width / 2 - (box.x + box.w / 2) * k, y: 20 - box.y * k};
  applyView();
}

function fitAll() { fitTo({x: 0, y: 0, w: state.graphSize.w, h: state.graphSize.h}, 1); }

// Bring the unit into view: moved to the middle if it is out of view, zoomed to at least minZoom.
function centerOn(key, minZoom) {
  const p = state.positions[key];
  if (!p) return;
  const r = svgRoot.getBoundingClientRect(), k = state.view.k;
  const sx = state.view.x + (p.x + p.w / 2) * k, sy = state.view.y + (p.y + p.h / 2) * k;
  if (sx < 30 || sx > r.width - 30 || sy < 30 || sy > r.height - 30 || k < (minZoom || 0)) {
    const kk = Math.max(k, minZoom || 0);
    state.view = {k: kk, x: r.width / 2 - (p.x + p.w / 2) * kk, y: r.height / 2 - (p.y + p.h / 2) * kk};
    applyView();
  }
}

(function panAndZoom() {
  let drag = null;
  svgRoot.addEventListener("mousedown", e => {
    drag = {x: e.clientX, y: e.clientY, vx: state.view.x, vy: state.view.y, moved: false};
  });
  window.addEventListener("mousemove", e => {
    if (!drag) return;
    if (Math.abs(e.clientX - drag.x) + Math.abs(e.clientY - drag.y) > 3) {
      drag.moved = true;
      svgRoot.classList.add("panning");
    }
    state.view.x = drag.vx + e.clientX - drag.x;
    state.view.y = drag.vy + e.clientY - drag.y;
    applyView();
  });
  window.addEventListener("mouseup", () => { drag = null; svgRoot.classList.remove("panning"); });
  svgRoot.addEventListener("wheel", e => {
    e.preventDefault();
    const r = svgRoot.getBoundingClientRect(), v = state.view;
    const k = Math.min(3, Math.max(0.05, v.k * Math.exp(-e.deltaY * 0.0015)));
    const mx = e.clientX - r.left, my = e.clientY - r.top;
    state.view = {k: k, x: mx - (mx - v.x) * k / v.k, y: my - (my - v.y) * k / v.k};
    applyView();
  }, {passive: false});
})();

// ---- opening, closing, selecting ---------------------------------------------------------------
function toggleGroup(g, open) {
  if (open) state.expanded.add(g);
  else if (g !== 0) {
    state.expanded.delete(g);
    (function closeInside(c) { childGroups[c].forEach(d => { state.expanded.delete(d); closeInside(d); }); })(g);
  }
  state.selected = {group: g};
  render();
  const p = state.positions["g" + g];
  if (p && open) showTopOf(p);
  else centerOn("g" + g);
  showGroup(g);
}

function reveal(id) {
  let changed = false;
  for (const g of ancestors(D.nodes[id].group)) if (!state.expanded.has(g)) { state.expanded.add(g); changed = true; }
  if (changed) render();
}

// Select a node ({node: id}) or a group ({group: id}); zoom: bring it close enough to read.
function select(what, zoom) {
  state.selected = what;
  if (what.node !== undefined) {
    reveal(what.node);
    centerOn("n" + what.node, zoom ? 0.9 : 0);
    showNode(what.node);
  } else {
    showGroup(what.group);
  }
  markStates();
}

// ---- the module tree, the attention and check lists ----------------------------------------------
function renderTree() {
  const tree = document.getElementById("tree");
  const item = g => {
    const open = state.expanded.has(g);
    const li = el("li", {"data-group": g},
      el("span", {class: "toggle", onclick: () => toggleGroup(g, !open)}, childGroups[g].length || members[g].length ? (open ? "\u25BE" : "\u25B8") : ""),
      el("span", {class: "name", onclick: () => toggleGroup(g, true)}, g === 0 ? "step" : groupName(g)),
      el("span", {class: "count"}, plural(opCount[g], "op") + (failedIn[g] ? ", " + failedIn[g] + " failed" : "")));
    if (open && childGroups[g].length) li.append(el("ul", {}, childGroups[g].map(item)));
    return li;
  };
  tree.replaceChildren(item(0));
}

function renderLists() {
  const list = document.getElementById("attention-list");
  if (!D.attention.length) list.append(el("li", {class: "sub"}, "none found"));
  D.attention.forEach((a, i) => list.append(el("li", {},
    el("a", {class: "link", onclick: () => openAttention(i)}, a.module || "(top level)"))));
  const checks = document.getElementById("check-list");
  const ops = D.nodes.filter(n => n.kind === "op");
  const passed = ops.filter(n => n.check && n.check.ok === true).length;
  const failed = ops.filter(n => n.check && n.check.ok === false);
  const unchecked = ops.length - passed - failed.length;
  checks.append(el("li", {}, passed + " passed" + (unchecked ? ", " + unchecked + " not checked" : "")));
  failed.forEach(n => checks.append(el("li", {class: "failed"},
    el("a", {class: "link", onclick: () => select({node: n.id}, true)}, "FAILED: " + n.op + " in " + (n.module || "top level")))));
  const summary = document.getElementById("summary");
  summary.append(`loss ${num(D.loss)} \u00B7 ${ops.length} ops \u00B7 ${D.walk.length} backward steps \u00B7 checks: ${passed} passed`);
  if (failed.length) summary.append(" ", el("span", {class: "bad"}, failed.length + " FAILED"));
}

// ---- heatmaps ----------------------------------------------------------------------------------
function colour(t, diverging) {   // t in [0, 1]
  if (diverging) {                // blue (negative) - white (0) - red (positive)
    const s = Math.abs(t - 0.5) * 2;
    return t < 0.5 ? [255 - 205 * s, 255 - 150 * s, 255 - 60 * s] : [255 - 40 * s, 255 - 200 * s, 255 - 210 * s];
  }
  return [255 - 222 * t, 255 - 170 * t, 255 - 100 * t];   // white - dark blue
}

function heatmapFigures(index, only) {
  if (index === null || index === undefined) return null;
  const h = D.heatmaps[index];
  const bytes = Uint8Array.from(atob(h.data), c => c.charCodeAt(0));
  const diverging = h.lo < 0 && h.hi > 0;
  const scale = Math.max(2, Math.min(14, Math.floor(150 / Math.max(h.rows, h.cols))));
  const figures = [];
  const slices = only === undefined ? [...Array(h.slices).keys()] : (only < h.slices ? [only] : []);
  for (const s of slices) {
    const canvas = el("canvas", {width: h.cols * scale, height: h.rows * scale});
    const ctx = canvas.getContext("2d");
    for (let r = 0; r < h.rows; r++) for (let c = 0; c < h.cols; c++) {
      const b = bytes[(s * h.rows + r) * h.cols + c];
      if (b === 255) ctx.fillStyle = "#b8b8b8";
      else { const [R, G, B] = colour(b / 254, diverging); ctx.fillStyle = `rgb(${R | 0},${G | 0},${B | 0})`; }
      ctx.fillRect(c * scale, r * scale, scale, scale);
    }
    canvas.addEventListener("mousemove", e => {
      const c = Math.floor(e.offsetX / scale), r = Math.floor(e.offsetY / scale);
      const b = bytes[(s * h.rows + r) * h.cols + c];
      const value = b === 255 ? "-inf / NaN (masked)" : "\u2248 " + num(h.lo + b / 254 * (h.hi - h.lo));
      tooltip(e, `[${r}, ${c}]${h.shrunk ? " (block mean)" : ""} ${value}`);
    });
    canvas.addEventListener("mouseleave", () => tooltip(null));
    figures.push(el("figure", {}, canvas, el("figcaption", {}, h.labels[s] || "")));
  }
  const note = `colour scale ${num(h.lo)} .. ${num(h.hi)}` + (diverging ? " (blue < 0 < red)" : "") +
    (h.slices < h.of ? `; first ${h.slices} of ${h.of} slices` : "") + (h.shrunk ? "; block means" : "");
  return el("div", {}, el("div", {class: "heatmaps"}, figures), el("div", {class: "scale"}, note));
}

function tooltip(e, text) {
  const t = document.getElementById("tooltip");
  if (!e) { t.hidden = true; return; }
  t.hidden = false;
  t.textContent = text;
  t.style.left = (e.clientX + 12) + "px";
  t.style.top = (e.clientY + 12) + "px";
}

function statsLine(s) {
  if (!s) return el("div", {class: "stats sub"}, "no statistics");
  const parts = [["min", s.min], ["max", s.max], ["mean", s.mean], ["std", s.std], ["|x|", s.norm]]
    .map(([k, v]) => el("span", {}, k + " ", el("b", {}, num(v))));
  if (s.inf) parts.push(el("span", {}, s.inf + " infinite"));
  if (s.nan) parts.push(el("span", {}, s.nan + " NaN"));
  return el("div", {class: "stats"}, parts);
}

// ---- the panel ---------------------------------------------------------------------------------
const panel = document.getElementById("panel");
// A link to an op or tensor; followed from the attention view, it closes the view so the op is in front.
const nodeLink = id => el("a", {class: "link", onclick: () => {
  document.getElementById("attention-view").hidden = true;
  select({node: id}, true);
}}, D.nodes[id].label + " #" + id);

function checkBox(check) {
  if (!check) return el("div", {class: "check unchecked"}, "not checked");
  if (check.ok === true)
    return el("div", {class: "check passed"}, el("b", {}, "check passed: "),
      `the backward agrees with central finite differences of the forward at the inputs this op saw ` +
      `(float64 copies): ${check.compared} derivatives compared, the largest difference ` +
      `${num(check.worst)} of the allowed (atol 1e-5 + rtol 1e-3 |numeric|).`);
  if (check.ok === false)
    return el("div", {class: "check failed"}, el("b", {}, "check FAILED: "), check.message);
  return el("div", {class: "check unchecked"}, el("b", {}, "not checked: "), check.message);
}

function showNode(id) {
  const n = D.nodes[id];
  const parts = [];
  const where = n.kind === "op" ? (n.module || "top level") : D.groups[n.group].path || "top level";
  parts.push(el("h2", {}, n.kind === "op" ? n.op : n.label, " ", el("span", {class: "sub"}, "#" + id)));
  if (n.kind === "op") {
    parts.push(el("div", {class: "sub"}, `${n.node_name} \u00B7 module ${where}` +
      (n.op_index !== null ? ` \u00B7 forward op ${n.op_index + 1}` : "") +
      (n.step ? ` \u00B7 backward step ${n.step} of ${D.walk.length}` : "")));
  } else {
    parts.push(el("div", {class: "sub"}, n.kind === "param" ? "parameter" : "input (a leaf that requires grad)"));
  }
  if (state.walk >= 0 && D.walk[state.walk] === id) parts.push(walkInfo(n));
  if (n.lines && n.lines.length) {
    parts.push(el("h4", {}, "code"));
    n.lines.forEach((line, i) => parts.push(el("div", {class: "sub"}, i === 0 ? "applied at " : "from your line ",
      el("span", {class: "mono"}, `${line[0]}:${line[1]} in ${line[2]}`), el("pre", {}, line[3]))));
  }
  if (n.kind === "op") {
    parts.push(el("h4", {}, "inputs and output"));
    const rows = n.inputs.map((inp, k) => el("tr", {},
      el("td", {class: "mono"}, inp.name || "in " + k),
      el("td", {}, inp.node !== null ? nodeLink(inp.node) : (inp.value !== undefined ? el("span", {class: "mono"}, inp.value) : "constant")),
      el("td", {class: "shape mono"}, inp.shape ? shapeText(inp.shape) : ""),
      el("td", {class: "mono"}, inp.dtype || ""),
      el("td", {}, inp.passed ? "|g| " + num(inp.passed.stats && inp.passed.stats.norm) : (inp.node !== null ? "no gradient" : ""))));
    rows.push(el("tr", {}, el("td", {}, el("b", {}, "out")), el("td", {}, n.label),
      el("td", {class: "shape mono"}, shapeText(n.shape)), el("td", {class: "mono"}, n.dtype),
      el("td", {}, n.grad ? "|g| " + num(n.grad.stats && n.grad.stats.norm) : "")));
    parts.push(el("table", {class: "io"}, el("tr", {}, ["", "from", "shape", "dtype", "gradient"].map(h => el("th", {}, h))), rows));
    const f = D.formulas[n.formula];
    parts.push(el("h4", {}, "formulas (from the op's source)"));
    parts.push(el("div", {class: "formula formula-forward"}, el("span", {class: "label"}, "forward"),
      f.forward ? el("span", {class: "mono"}, f.forward) : el("span", {class: "sub"}, "stated in no comment: its source is below")));
    parts.push(el("div", {class: "formula formula-backward"}, el("span", {class: "label"}, "backward"),
      f.backward ? el("span", {class: "mono"}, f.backward) : el("span", {class: "sub"}, "stated in no comment: its source is below")));
    parts.push(el("details", {}, el("summary", {}, "source: " + (f.where || "not available")),
      el("pre", {}, f.forward_source), el("pre", {}, f.backward_source)));
    parts.push(el("h4", {}, "finite-difference check of this op's backward"));
    parts.push(checkBox(n.check));
    if (n.attention !== undefined)
      parts.push(el("p", {}, el("button", {id: "open-attention", onclick: () => openAttention(n.attention)},
        "attention view: Q, K, V, scores, weights, output")));
  }
  parts.push(el("h4", {}, n.kind === "op" ? "value (the op's output)" : "value"));
  parts.push(statsLine(n.value.stats), heatmapFigures(n.value.heat));
  parts.push(el("h4", {}, "gradient arriving: dL/d(this)"));
  if (n.grad) parts.push(statsLine(n.grad.stats), heatmapFigures(n.grad.heat));
  else parts.push(el("div", {class: "sub"}, "none reached it"));
  if (n.kind === "op") {
    n.inputs.forEach((inp, k) => {
      if (!inp.passed) return;
      parts.push(el("h4", {}, "gradient passed on to input " + k + " (", nodeLink(inp.node), ")"));
      parts.push(statsLine(inp.passed.stats));
      if (inp.passed.all) parts.push(el("div", {class: "sub"}, "its only use: this is all the gradient it receives (see its panel)"));
      else parts.push(heatmapFigures(inp.passed.heat));
    });
  } else if (n.consumers.length) {
    parts.push(el("h4", {}, "used by"));
    parts.push(el("div", {}, n.consumers.map(c => [nodeLink(c), " "])));
  }
  panel.replaceChildren(...parts.filter(Boolean));
  panel.scrollTop = 0;
}

function walkInfo(n) {
  const passed = n.inputs.filter(i => i.passed).map(i => [nodeLink(i.node), " |g| " + num(i.passed.stats.norm) + "  "]);
  return el("div", {class: "walkinfo"}, el("b", {}, `step ${state.walk + 1} of ${D.walk.length}: `),
    `the gradient arrives at ${n.op} (|g| ${num(n.grad && n.grad.stats.norm)}); its backward sends on: `,
    passed.length ? passed : "nothing");
}

function showGroup(g) {
  const group = D.groups[g];
  const parts = [el("h2", {}, g === 0 ? "the whole step" : groupName(g)),
    el("div", {class: "sub"}, (group.path || (g === 0 ? "" : "the model")) + " \u00B7 " + plural(opCount[g], "op"))];
  const ops = D.nodes.filter(n => n.kind === "op" && ancestors(n.group).includes(g));
  const params = D.nodes.filter(n => n.kind === "param" && ancestors(n.group).includes(g));
  if (failedIn[g]) parts.push(el("div", {class: "check failed"}, failedIn[g] + " ops inside failed their check"));
  parts.push(el("h4", {}, "ops inside, in backward order"));
  parts.push(el("table", {}, ops.filter(n => n.step).sort((a, b) => a.step - b.step).map(n => el("tr", {},
    el("td", {}, n.step), el("td", {}, nodeLink(n.id)), el("td", {class: "mono"}, shapeText(n.shape)),
    el("td", {}, "|grad| " + num(n.grad && n.grad.stats.norm))))));
  if (params.length) {
    parts.push(el("h4", {}, "parameters"));
    parts.push(el("table", {}, params.map(n => el("tr", {}, el("td", {}, nodeLink(n.id)),
      el("td", {class: "mono"}, shapeText(n.shape)), el("td", {}, "|grad| " + num(n.grad && n.grad.stats.norm))))));
  }
  panel.replaceChildren(...parts);
  panel.scrollTop = 0;
}

// ---- the attention view ------------------------------------------------------------------------
function openAttention(i) {
  const a = D.attention[i];
  const view = document.getElementById("attention-view");
  const heads = Math.max(1, ...["query", "key", "value", "scores", "weights", "output"].map(f =>
    a[f] !== null && D.nodes[a[f]].value.heat !== null ? D.heatmaps[D.nodes[a[f]].value.heat].slices : 1));
  let head = 0;
  const roles = [["Q", "query"], ["K", "key"], ["V", "value"], ["scores", "scores"],
    ["weights = softmax(scores)", "weights"], ["output = weights V", "output"]];
  const compact = s => el("div", {class: "scale"}, s ? `range ${num(s.min)} .. ${num(s.max)}, |x| ${num(s.norm)}` : "");
  const draw = () => {
    const head_ = roles.map(([name, f]) => el("th", {"data-role": f}, name,
      a[f] === null ? null : [el("div", {}, nodeLink(a[f])), el("div", {class: "mono sub"}, shapeText(D.nodes[a[f]].shape))]));
    const cells = which => roles.map(([, f]) => {
      if (a[f] === null) return el("td", {class: "sub"}, "takes no gradient");
      const part = D.nodes[a[f]][which];
      return el("td", {}, part ? [heatmapFigures(part.heat, head) || "-", compact(part.stats)] : "no gradient");
    });
    const picker = el("span", {}, " head (slice): ", [...Array(heads).keys()].map(h =>
      el("button", {class: h === head ? "active" : "", onclick: () => { head = h; draw(); }}, String(h))));
    view.replaceChildren(el("button", {class: "close", onclick: () => { view.hidden = true; }}, "close"),
      el("h2", {}, "attention in " + (a.module || "the top level")), picker,
      el("p", {class: "sub"}, "The block's tensors side by side, each above the gradient the backward pass brought it " +
        "(scores: softmax's input, scaled and masked). Masked scores (-inf) are grey: their weights are 0 and " +
        "they pass no gradient back to Q and K."),
      el("table", {}, el("tr", {}, el("th", {}, ""), head_),
        el("tr", {class: "values"}, el("th", {}, "value"), cells("value")),
        el("tr", {class: "grads"}, el("th", {}, "gradient dL/d(this)"), cells("grad"))));
  };
  draw();
  view.hidden = false;
}

// ---- search ------------------------------------------------------------------------------------
(function search() {
  const box = document.getElementById("search"), list = document.getElementById("search-results");
  const run = () => {
    const q = box.value.trim().toLowerCase();
    list.replaceChildren();
    if (!q) { list.hidden = true; return; }
    const hits = [];
    D.groups.forEach(g => { if (g.id && (g.path + " " + g.kind).toLowerCase().includes(q)) hits.push({group: g.id}); });
    D.nodes.forEach(n => {
      const text = (n.label + " " + (n.op || "") + " " + (n.module || "")).toLowerCase();
      if (text.includes(q)) hits.push({node: n.id});
    });
    hits.slice(0, 60).forEach(h => list.append(el("li", {onclick: () => {
      list.hidden = true;
      if (h.group !== undefined) { for (const g of ancestors(D.groups[h.group].parent)) state.expanded.add(g); toggleGroup(h.group, true); }
      else select(h, true);
    }}, h.group !== undefined ? [el("b", {}, groupName(h.group)), el("span", {class: "where"}, D.groups[h.group].path)]
                              : [el("b", {}, D.nodes[h.node].label), el("span", {class: "where"}, (D.nodes[h.node].module || "") + " #" + h.node)])));
    if (hits.length > 60) list.append(el("li", {class: "sub"}, (hits.length - 60) + " more"));
    if (!hits.length) list.append(el("li", {class: "sub"}, "nothing matches"));
    list.hidden = false;
  };
  box.addEventListener("input", run);
  box.addEventListener("keydown", e => {
    if (e.key === "Enter" && list.firstChild) list.firstChild.click();
    if (e.key === "Escape") { list.hidden = true; box.blur(); }
  });
})();

// ---- the backward walk -------------------------------------------------------------------------
// Where next and prev move from: the selected op's step when an op of the walk is selected, else the walk's.
function walkFrom() {
  const id = state.selected ? state.selected.node : undefined;
  const k = id !== undefined ? D.walk.indexOf(id) : -1;
  return k >= 0 ? k : state.walk;
}

function walkTo(k) {
  if (!D.walk.length) return;
  state.walk = Math.max(0, Math.min(D.walk.length - 1, k));
  const id = D.walk[state.walk];
  document.getElementById("walk-pos").textContent = `step ${state.walk + 1} / ${D.walk.length}`;
  select({node: id}, true);
}

document.getElementById("walk-next").addEventListener("click", () => walkTo(walkFrom() + 1));
document.getElementById("walk-prev").addEventListener("click", () => walkTo(walkFrom() - 1));
document.getElementById("walk-start").addEventListener("click", () => walkTo(0));
document.getElementById("expand-all").addEventListener("click", () => { D.groups.forEach(g => state.expanded.add(g.id)); render(); fitAll(); });
document.getElementById("collapse-all").addEventListener("click", () => { state.expanded = new Set([0]); render(); fitAll(); });
document.getElementById("fit").addEventListener("click", fitAll);
document.addEventListener("keydown", e => {
  if (e.target.tagName === "INPUT") return;
  if (e.key === "ArrowRight") walkTo(walkFrom() + 1);
  else if (e.key === "ArrowLeft") walkTo(walkFrom() - 1);
  else if (e.key === "Home") walkTo(0);
  else if (e.key === "Escape") document.getElementById("attention-view").hidden = true;
});

// ---- start -------------------------------------------------------------------------------------
renderLists();
const firstRender = render();
fitAll();
window.explore = {data: D, state: state, firstRenderMs: firstRender};
document.body.dataset.ready = "1";
