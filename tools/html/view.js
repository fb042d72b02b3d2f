// The page: draws the layout as SVG, and wires the interactions: click a box
// to expand its scope, a frame's header to collapse it, a node for its
// details; drag to pan, wheel to zoom; search; the flops/bytes overlay.
'use strict';

const SVG_NS = 'http://www.w3.org/2000/svg';
const CHAR_W = 7.2;      // monospace 12px, for sizing labels before drawing them
const LABEL_MAX = 44;    // characters of a label drawn; the tooltip has all of it
const HITS_LISTED = 200;
const ELLIPSIS = '\u2026';

const view = {
  model: null,
  expanded: new Set(),  // keys of the groups drawn open
  layout: null,
  itemElements: [],     // layout.items[i] -> its <g>
  selected: null,       // {leaf} or {group}
  hits: [],
  hitGroups: new Set(), // groups holding a hit
  hitLeaves: new Set(),
  overlay: 'none',
  transform: {x: 0, y: 0, s: 1},
  users: null,          // leaf index -> leaves using its value(s), built on first need
  errors: [],
  drawMs: 0,
};

window.addEventListener('error', e => view.errors.push(e.message));

const $ = id => document.getElementById(id);

function svg(tag, attrs, parent) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

function html(tag, className, text, parent) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}

function clip(text) {
  return text.length > LABEL_MAX ? text.slice(0, LABEL_MAX - 1) + ELLIPSIS : text;
}

// 1234567 -> "1.23 M"
function quantity(v, unit) {
  const prefixes = ['', 'k', 'M', 'G', 'T', 'P'];
  let k = 0;
  while (Math.abs(v) >= 1000 && k < prefixes.length - 1) {
    v /= 1000;
    k += 1;
  }
  const digits = k === 0 ? String(Math.round(v * 100) / 100) : v.toPrecision(3);
  return digits + ' ' + prefixes[k] + unit;
}

// ---- labels and sizes

function nodeLabel(node) {
  if (node.op === 'constant' && node.attrs && node.attrs.value) return 'constant ' + attrText(node.attrs.value);
  const subgraphs = Object.values(node.attrs || {}).filter(a => 'graphs' in a);
  if (subgraphs.length) {
    const bodies = subgraphs.reduce((s, a) => s + a.graphs.length, 0);
    return node.op + ' [' + bodies + (bodies === 1 ? ' body]' : ' bodies]');
  }
  return node.op;
}

function typesLine(types) {
  const first = shapeText(types[0] || {dtype: '?', shape: []});
  return types.length > 1 ? first + ' +' + (types.length - 1) : first;
}

function groupCountText(group) {
  if (group.kind === 'inputs') return group.leafCount + (group.leafCount === 1 ? ' input' : ' inputs');
  if (group.kind === 'outputs') return group.leafCount + (group.leafCount === 1 ? ' output' : ' outputs');
  return group.nodeCount + (group.nodeCount === 1 ? ' node' : ' nodes');
}

// The lines an item shows.
function itemLines(item) {
  if (item.kind === 'box') return [item.group.name, groupCountText(item.group)];
  const leaf = item.leaf;
  if (leaf.kind === 'node') return [nodeLabel(leaf.node), typesLine(leaf.node.outputs)];
  const v = view.model.values.get(leaf.value);
  return [leaf.label, v ? shapeText(v.type) : '%' + leaf.value];
}

function measure(item) {
  const lines = itemLines(item).map(clip);
  item.lines = lines;
  const chars = Math.max(...lines.map(l => l.length));
  return {w: Math.max(60, chars * CHAR_W + 20), h: item.kind === 'box' ? 44 : 36};
}

function headerText(group) {
  return (group.kind === 'scope' ? group.key : group.name) + ' \u2014 ' + groupCountText(group);
}

function headerWidth(group) {
  return clip(headerText(group)).length * CHAR_W + 30;
}

// ---- drawing

function draw() {
  const layout = layoutView(view.model, view.expanded, measure, headerWidth);
  const start = performance.now();
  const root = $('viewport');
  root.textContent = '';
  // Frames under the edges, their headers (the collapse buttons) above them.
  const framesLayer = svg('g', {class: 'frames'}, root);
  const edgesLayer = svg('g', {class: 'edges'}, root);
  const headersLayer = svg('g', {class: 'headers'}, root);
  const itemsLayer = svg('g', {class: 'items'}, root);

  for (const f of layout.frames) {
    const group = f.group;
    const g = svg('g', {class: 'frame' + (group.backward ? ' bwd' : '') + (group.kind !== 'scope' ? ' io-group' : ''),
                        'data-key': group.key}, framesLayer);
    svg('rect', {x: f.x, y: f.y, width: f.w, height: f.h, rx: 6, class: 'frame-body'}, g);
    const header = svg('g', {class: 'frame-header' + (group.backward ? ' bwd' : '') +
                                    (group.kind !== 'scope' ? ' io-group' : ''), 'data-key': group.key}, headersLayer);
    svg('rect', {x: f.x, y: f.y, width: f.w, height: LAYOUT.headerH, rx: 6, class: 'frame-head'}, header);
    svg('text', {x: f.x + 10, y: f.y + 16}, header).textContent = '\u25be ' + clip(headerText(group));
    svg('title', {}, header).textContent = headerText(group) + '\n(click to collapse)';
    f.element = g;
  }

  for (const e of layout.edges) {
    const a = e.from;
    const b = e.to;
    const x1 = a.x + a.w / 2;
    const y1 = a.y + a.h;
    const x2 = b.x + b.w / 2;
    const y2 = b.y;
    const bend = Math.max(24, Math.abs(y2 - y1) / 2);
    const path = svg('path', {d: `M${x1},${y1} C${x1},${y1 + bend} ${x2},${y2 - bend} ${x2},${y2}`,
                              class: 'edge' + (y2 < y1 ? ' back' : ''), 'marker-end': 'url(#arrow)'}, edgesLayer);
    const values = e.values.map(id => '%' + id).join(' ') + (e.count > e.values.length ? ' ' + ELLIPSIS : '');
    svg('title', {}, path).textContent = e.count + (e.count === 1 ? ' value: ' : ' values: ') + values;
    if (e.count > 1) {
      const t = svg('text', {x: (x1 + x2) / 2 + 4, y: (y1 + y2) / 2, class: 'edge-count'}, edgesLayer);
      t.textContent = String(e.count);
    }
  }

  view.itemElements = layout.items.map(item => drawItem(item, itemsLayer));
  view.layout = layout;
  view.drawMs = performance.now() - start;
  refreshMarks();
  const boxes = layout.items.filter(i => i.kind === 'box').length;
  $('status').textContent = `${layout.items.length - boxes} drawn, ${boxes} collapsed groups; layout ` +
                            `${layout.ms.toFixed(1)} ms, drawing ${view.drawMs.toFixed(1)} ms`;
}

function drawItem(item, parent) {
  const g = svg('g', {transform: `translate(${item.x},${item.y})`, 'data-index': item.index}, parent);
  let title;
  if (item.kind === 'box') {
    const group = item.group;
    g.setAttribute('class', 'box' + (group.backward ? ' bwd' : '') + (group.kind !== 'scope' ? ' io-group' : ''));
    g.setAttribute('data-key', group.key);
    svg('rect', {width: item.w, height: item.h, rx: 6, class: 'shape'}, g);
    svg('rect', {x: 3, y: 3, width: item.w - 6, height: item.h - 6, rx: 4, class: 'inner'}, g);
    title = (group.kind === 'scope' ? group.key : group.name) + '\n' + groupCountText(group) + '\n(click to expand)';
  } else {
    const leaf = item.leaf;
    const backward = leaf.kind === 'node' && isBackwardScope(leaf.node.scope || '');
    g.setAttribute('class', (leaf.kind === 'node' ? 'node' : 'io ' + leaf.kind) + (backward ? ' bwd' : ''));
    if (leaf.kind === 'node') g.setAttribute('data-node', leaf.node.id);
    if (leaf.kind === 'input') {
      const h = item.h;
      svg('path', {d: `M0,${h / 2} L10,0 H${item.w - 10} L${item.w},${h / 2} L${item.w - 10},${h} H10 Z`, class: 'shape'}, g);
    } else {
      svg('rect', {width: item.w, height: item.h, rx: leaf.kind === 'output' ? 16 : 3, class: 'shape'}, g);
    }
    title = leaf.kind === 'node' ? nodeLabel(leaf.node) + ' (node ' + leaf.node.id + ')\n' + (leaf.node.scope || '(top level)')
                                 : leaf.kind + ' ' + leaf.position + ': ' + leaf.label;
  }
  item.lines.forEach((line, k) => {
    const t = svg('text', {x: item.w / 2, y: 16 + 14 * k, class: k === 0 ? 'l1' : 'l2'}, g);
    t.textContent = line;
  });
  svg('title', {}, g).textContent = title;
  return g;
}

// ---- overlay, hits and selection marks

function costOf(item) {
  const holder = item.kind === 'box' ? item.group : item.leaf;
  return holder[view.overlay] || 0;
}

function heat(t) {
  // pale yellow -> orange -> red
  const hue = 55 - 55 * t;
  const light = 88 - 26 * t;  // no darker than 62 %, so that the labels stay readable
  return `hsl(${hue.toFixed(0)},95%,${light.toFixed(0)}%)`;
}

function refreshMarks() {
  const layout = view.layout;
  const legend = $('legend');
  legend.textContent = '';
  let lo = Infinity;
  let hi = 0;
  if (view.overlay !== 'none') {
    for (const item of layout.items) {
      const c = costOf(item);
      if (c > 0) {
        lo = Math.min(lo, c);
        hi = Math.max(hi, c);
      }
    }
  }
  const unit = view.overlay === 'flops' ? 'FLOP' : 'B';
  const span = hi > lo ? Math.log(hi) - Math.log(lo) : 1;
  layout.items.forEach((item, i) => {
    const g = view.itemElements[i];
    const shape = g.querySelector('.shape');
    const c = view.overlay === 'none' ? 0 : costOf(item);
    if (c > 0) {
      shape.style.fill = heat((Math.log(c) - Math.log(lo)) / span);
      g.classList.add('heated');
    } else {
      shape.style.fill = '';
      g.classList.remove('heated');
    }
    const sel = view.selected;
    const selected = sel && (item.kind === 'box' ? sel.group === item.group : sel.leaf === item.leaf);
    g.classList.toggle('selected', !!selected);
    g.classList.toggle('hit', item.kind === 'leaf' && view.hitLeaves.has(item.leaf));
    g.classList.toggle('has-hit', item.kind === 'box' && view.hitGroups.has(item.group));
  });
  for (const f of layout.frames) f.element.classList.toggle('selected', !!view.selected && view.selected.group === f.group);
  if (view.overlay !== 'none' && hi > 0) {
    html('span', '', quantity(lo, unit) + ' ', legend);
    html('span', 'ramp', '', legend);
    html('span', '', ' ' + quantity(hi, unit) + ' (log scale, over what is drawn)', legend);
  }
}

// ---- view transform

function applyTransform() {
  const t = view.transform;
  $('viewport').setAttribute('transform', `translate(${t.x},${t.y}) scale(${t.s})`);
}

function canvasSize() {
  const r = $('canvas').getBoundingClientRect();
  return {w: r.width, h: r.height};
}

// The whole drawing in the window, at most at 1.2x.
function fit() {
  const {w, h} = canvasSize();
  const layout = view.layout;
  const s = Math.min(1.2, (w - 20) / layout.width, (h - 20) / layout.height);
  view.transform = {s, x: (w - layout.width * s) / 2, y: Math.max(10, (h - layout.height * s) / 2)};
  applyTransform();
}

// The first view: fitted, but never so small that the labels cannot be read
// (a deep model's column of blocks is taller than the window); then its top.
function firstView() {
  fit();
  const {w} = canvasSize();
  if (view.transform.s < 0.75) {
    const s = 0.75;
    view.transform = {s, x: (w - view.layout.width * s) / 2, y: 10};
    applyTransform();
  }
}

// Zoomed to at least 0.8, the item's centre at the canvas's centre.
function centreOn(item) {
  const {w, h} = canvasSize();
  const s = Math.max(view.transform.s, 0.8);
  view.transform = {s, x: w / 2 - (item.x + item.w / 2) * s, y: h / 2 - (item.y + item.h / 2) * s};
  applyTransform();
}

// Where a group's box or frame is, in layout coordinates.
function groupPlace(group) {
  const layout = view.layout;
  const item = layout.items.find(i => i.kind === 'box' && i.group === group);
  if (item) return item;
  return layout.frames.find(f => f.group === group) || null;
}

// Redraws with the group's top-left corner kept where it was on screen, so
// that expanding or collapsing does not move what the user clicked.
function redrawKeeping(group) {
  const before = groupPlace(group);
  const t = view.transform;
  const screen = before ? {x: t.x + before.x * t.s, y: t.y + before.y * t.s} : null;
  draw();
  const after = groupPlace(group);
  if (screen && after) {
    t.x = screen.x - after.x * t.s;
    t.y = screen.y - after.y * t.s;
    applyTransform();
  }
}

// ---- actions

function expandGroup(group) {
  view.expanded.add(group.key);
  view.selected = {group};
  redrawKeeping(group);
  showGroup(group);
}

function collapseGroup(group) {
  view.expanded.delete(group.key);
  view.selected = {group};
  redrawKeeping(group);
  showGroup(group);
}

function selectLeaf(leaf) {
  view.selected = {leaf};
  refreshMarks();
  showLeaf(leaf);
}

// Opens the leaf's scopes, selects it and brings it to the centre.
function reveal(leaf) {
  let opened = false;
  for (const g of view.model.ancestors(leaf)) {
    if (!view.expanded.has(g.key)) {
      view.expanded.add(g.key);
      opened = true;
    }
  }
  view.selected = {leaf};
  if (opened) draw();
  else refreshMarks();
  const item = view.layout.items.find(i => i.kind === 'leaf' && i.leaf === leaf);
  if (item) centreOn(item);
  showLeaf(leaf);
}

function runSearch() {
  const query = $('search').value;
  const summary = $('search-summary');
  const list = $('hits');
  list.textContent = '';
  summary.classList.remove('error');
  try {
    view.hits = view.model.search(query, $('regex').checked);
  } catch (e) {
    view.hits = [];
    summary.classList.add('error');
    summary.textContent = 'bad regular expression: ' + e.message;
  }
  view.hitLeaves = new Set(view.hits);
  view.hitGroups = new Set();
  for (const leaf of view.hits) for (const g of view.model.ancestors(leaf)) view.hitGroups.add(g);
  if (!summary.classList.contains('error')) {
    summary.textContent = query.trim() === '' ? '' :
        view.hits.length + (view.hits.length === 1 ? ' hit' : ' hits') +
        (view.hits.length > HITS_LISTED ? ' (the first ' + HITS_LISTED + ' listed)' : '');
  }
  view.hits.slice(0, HITS_LISTED).forEach((leaf, k) => {
    const li = html('li', 'hit-item', undefined, list);
    li.dataset.hit = k;
    if (leaf.kind === 'node') {
      html('span', 'op', nodeLabel(leaf.node), li);
      html('span', 'vals', ' ' + leaf.node.outputs.map(v => '%' + v.id).join(' '), li);
      html('span', 'scope', ' ' + (leaf.node.scope || '(top level)'), li);
    } else {
      html('span', 'op', leaf.kind, li);
      html('span', 'vals', ' ' + leaf.label, li);
    }
  });
  refreshMarks();
}

// ---- the side panel

function panelRow(table, name, value) {
  const tr = html('tr', '', undefined, table);
  html('th', '', name, tr);
  const td = html('td', '', undefined, tr);
  if (value instanceof Node) td.appendChild(value);
  else td.textContent = value;
  return td;
}

function leafLink(leaf, text) {
  const a = html('a', 'leaf-link', text);
  a.href = '#';
  a.addEventListener('click', e => {
    e.preventDefault();
    reveal(leaf);
  });
  return a;
}

function describeLeaf(leaf) {
  if (leaf.kind === 'node') return nodeLabel(leaf.node) + ' (' + (leaf.node.scope || 'top level') + ')';
  return leaf.kind + ' ' + leaf.label;
}

// The leaves that use each leaf's values.
function usersOf(leaf) {
  if (!view.users) {
    view.users = view.model.leaves.map(() => []);
    for (const e of view.model.edges) view.users[e.from].push({leaf: view.model.leaves[e.to], value: e.value});
  }
  return view.users[leaf.at];
}

function valueList(ids, withProducer) {
  const div = html('div', 'values');
  for (const id of ids) {
    const line = html('div', '', view.model.valueText(id), div);
    const v = view.model.values.get(id);
    if (withProducer && v) {
      line.append(' \u2190 ');
      line.appendChild(leafLink(view.model.leaves[v.producer], describeLeaf(view.model.leaves[v.producer])));
    }
  }
  return div;
}

function usersList(leaf) {
  const div = html('div', 'values');
  const users = usersOf(leaf);
  for (const u of users.slice(0, 40)) {
    const line = html('div', '', '%' + u.value + ' \u2192 ', div);
    line.appendChild(leafLink(u.leaf, describeLeaf(u.leaf)));
  }
  if (users.length > 40) html('div', '', ELLIPSIS + ' ' + (users.length - 40) + ' more', div);
  if (users.length === 0) div.textContent = '(none)';
  return div;
}

function costRows(table, holder) {
  panelRow(table, 'flops', holder.flops ? quantity(holder.flops, 'FLOP') + ' (' + holder.flops + ')' : '0');
  panelRow(table, 'bytes', holder.bytes ? quantity(holder.bytes, 'B') + ' (' + holder.bytes + ')' : '0');
}

function showLeaf(leaf) {
  const panel = $('panel');
  panel.textContent = '';
  const table = html('table', 'details');
  if (leaf.kind === 'node') {
    const n = leaf.node;
    html('h2', '', nodeLabel(n), panel);
    panel.appendChild(table);
    panelRow(table, 'node', String(n.id));
    panelRow(table, 'scope', n.scope || '(top level)');
    panelRow(table, 'source', n.loc ? n.loc.file + ':' + n.loc.line : '(unknown)');
    if (n.loc && n.loc.function) panelRow(table, 'function', n.loc.function).className = 'small';
    panelRow(table, 'outputs', valueList(n.outputs.map(v => v.id), false));
    panelRow(table, 'inputs', valueList(n.inputs, true));
    for (const [name, a] of Object.entries(n.attrs || {})) if (!('graphs' in a)) panelRow(table, name, attrText(a));
    costRows(table, leaf);
    if (leaf.perTrip) panelRow(table, 'note', 'a while loop: its costs are one trip\'s');
    for (const s of subgraphSummaries(n)) panelRow(table, s.label, s.text).className = 'small';
  } else {
    html('h2', '', leaf.label, panel);
    panel.appendChild(table);
    panelRow(table, leaf.kind, String(leaf.position));
    panelRow(table, 'value', view.model.valueText(leaf.value));
    if (leaf.kind === 'output') panelRow(table, 'from', valueList([leaf.value], true));
  }
  if (leaf.kind !== 'output') panelRow(table, 'users', usersList(leaf));
}

function opHistogram(group) {
  const ops = new Map();
  const walk = g => {
    for (const leaf of g.leaves) if (leaf.kind === 'node') ops.set(leaf.node.op, (ops.get(leaf.node.op) || 0) + 1);
    for (const c of g.children) walk(c);
  };
  walk(group);
  return [...ops.entries()].sort((a, b) => b[1] - a[1]).slice(0, 10).map(([op, k]) => op + ' ' + k).join(', ');
}

function showGroup(group) {
  const panel = $('panel');
  panel.textContent = '';
  html('h2', '', group.kind === 'scope' ? group.key : group.name, panel);
  const table = html('table', 'details', undefined, panel);
  panelRow(table, 'kind', group.kind === 'scope' ? (group.backward ? 'scope (backward pass)' : 'scope') : 'graph ' + group.kind);
  panelRow(table, group.kind === 'scope' ? 'nodes' : group.kind, String(group.kind === 'scope' ? group.nodeCount : group.leafCount));
  panelRow(table, 'child groups', String(group.children.length));
  if (group.kind === 'scope') {
    costRows(table, group);
    if (group.perTrip) panelRow(table, 'note', 'holds a while loop: its costs are one trip\'s');
    panelRow(table, 'ops', opHistogram(group)).className = 'small';
  }
  const button = html('button', '', view.expanded.has(group.key) ? 'collapse' : 'expand', panel);
  button.addEventListener('click', () => (view.expanded.has(group.key) ? collapseGroup(group) : expandGroup(group)));
}

// ---- wiring

function itemAt(target) {
  const g = target.closest('[data-index]');
  return g ? view.layout.items[Number(g.dataset.index)] : null;
}

function onCanvasClick(event) {
  const header = event.target.closest('.frame-header');
  if (header) {
    collapseGroup(view.model.groups.get(header.dataset.key));
    return;
  }
  const item = itemAt(event.target);
  if (!item) return;
  if (item.kind === 'box') expandGroup(item.group);
  else selectLeaf(item.leaf);
}

function wirePanZoom() {
  const canvas = $('canvas');
  let drag = null;
  let dragged = false;  // the click that ends a drag is not a click on what is under it
  canvas.addEventListener('pointerdown', e => {
    dragged = false;
    if (e.button === 0) drag = {x: e.clientX, y: e.clientY, tx: view.transform.x, ty: view.transform.y, moved: false};
  });
  canvas.addEventListener('pointermove', e => {
    if (!drag) return;
    const dx = e.clientX - drag.x;
    const dy = e.clientY - drag.y;
    if (!drag.moved && Math.hypot(dx, dy) < 4) return;
    if (!drag.moved) {
      try {
        canvas.setPointerCapture(e.pointerId);  // keeps panning when the pointer leaves the canvas
      } catch (err) {
        // a synthetic pointer (the self-test's) cannot be captured
      }
    }
    drag.moved = true;
    view.transform.x = drag.tx + dx;
    view.transform.y = drag.ty + dy;
    applyTransform();
  });
  canvas.addEventListener('pointerup', () => {
    dragged = !!drag && drag.moved;
    drag = null;
  });
  canvas.addEventListener('wheel', e => {
    e.preventDefault();
    const r = canvas.getBoundingClientRect();
    const px = e.clientX - r.left;
    const py = e.clientY - r.top;
    const t = view.transform;
    const s = Math.min(4, Math.max(0.02, t.s * Math.exp(-e.deltaY * 0.0015)));
    t.x = px - ((px - t.x) * s) / t.s;
    t.y = py - ((py - t.y) * s) / t.s;
    t.s = s;
    applyTransform();
  }, {passive: false});
  canvas.addEventListener('click', e => {
    if (dragged) dragged = false;
    else onCanvasClick(e);
  });
}

function init() {
  const doc = JSON.parse($('graph-data').textContent);
  const costs = JSON.parse($('cost-data').textContent);
  view.model = new Model(doc, costs);
  const g = doc.graph;
  const title = `graft graph: ${g.nodes.length} nodes, ${g.inputs.length} inputs, ${g.outputs.length} outputs`;
  $('title').textContent = title;
  document.title = title;
  wirePanZoom();
  $('fit').addEventListener('click', fit);
  $('collapse-all').addEventListener('click', () => {
    view.expanded.clear();
    draw();
    fit();
  });
  $('expand-all').addEventListener('click', () => {
    for (const key of view.model.groups.keys()) if (key !== '') view.expanded.add(key);
    draw();
    fit();
  });
  $('overlay').addEventListener('change', e => {
    view.overlay = e.target.value;
    refreshMarks();
  });
  $('search').addEventListener('input', runSearch);
  $('regex').addEventListener('change', runSearch);
  $('search').addEventListener('keydown', e => {
    if (e.key === 'Enter' && view.hits.length) reveal(view.hits[0]);
  });
  $('hits').addEventListener('click', e => {
    const li = e.target.closest('li[data-hit]');
    if (li) reveal(view.hits[Number(li.dataset.hit)]);
  });
  draw();
  firstView();
}

init();
