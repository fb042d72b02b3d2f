// The layered layout of what is visible. Only expanded (open) groups are
// laid out: a collapsed group is one box however many nodes it holds, so the
// cost follows what is on screen, not the graph's size. Each open group is
// laid out on its own (its child groups, as boxes or as open frames of their
// own, and its nodes): rank by longest path, a few barycentre ordering
// sweeps, then x positions pulled towards their neighbours; a frame is then a
// unit of its parent's layout. Value edges are bundled: one edge per pair of
// visible items, with the number of values it carries.
'use strict';

const LAYOUT = {
  gapX: 22,      // between units of a layer
  gapY: 44,      // between layers
  framePad: 12,  // inside a frame's border
  headerH: 24,   // a frame's header (its name; click to collapse)
  sweeps: 4,     // barycentre ordering sweeps, alternating down and up
  xPasses: 3,    // rounds of pulling x towards the neighbours' mean
};

// Visible items: a box per collapsed group whose parent is open, a leaf per
// leaf of an open group; frames: the open groups, root first.
function visibleItems(model, expanded) {
  const items = [];
  const frames = [];
  const openGroups = new Set();
  const boxOf = new Map();
  const leafItems = new Map();
  const visit = group => {
    openGroups.add(group);
    frames.push(group);
    for (const child of group.children) {
      if (expanded.has(child.key)) {
        visit(child);
      } else {
        const item = {kind: 'box', group: child, frame: group, order: child.order, index: items.length};
        boxOf.set(child, item);
        items.push(item);
      }
    }
    for (const leaf of group.leaves) {
      const item = {kind: 'leaf', leaf, frame: group, order: leaf.order, index: items.length};
      leafItems.set(leaf, item);
      items.push(item);
    }
  };
  visit(model.root);
  // Each leaf's visible item: itself, or the outermost collapsed group holding it.
  const repOf = leaf => {
    let box = null;
    for (let g = leaf.group; !openGroups.has(g); g = g.parent) box = g;
    return box ? boxOf.get(box) : leafItems.get(leaf);
  };
  return {items, frames, openGroups, repOf};
}

// One edge per ordered pair of visible items.
function bundleEdges(model, items, repOf) {
  const bundles = new Map();
  const reps = model.leaves.map(repOf);
  for (const e of model.edges) {
    const a = reps[e.from];
    const b = reps[e.to];
    if (a === b) continue;
    const key = a.index * items.length + b.index;
    let bundle = bundles.get(key);
    if (!bundle) {
      bundle = {from: a, to: b, count: 0, values: []};
      bundles.set(key, bundle);
    }
    bundle.count += 1;
    if (bundle.values.length < 8) bundle.values.push(e.value);
  }
  return [...bundles.values()];
}

// Lays out one level: units {w, h, order} and edges {from, to} between them
// (indices into units); sets each unit's x, y (relative) and returns the size.
function layoutLevel(units, edges) {
  const n = units.length;
  if (n === 0) return {w: 0, h: 0};
  const byOrder = units.map((u, i) => i).sort((a, b) => units[a].order - units[b].order);
  const seq = new Array(n);  // position in first-leaf order: edges forward in it rank, the others are ignored
  byOrder.forEach((u, k) => (seq[u] = k));
  const preds = units.map(() => []);
  const succs = units.map(() => []);
  for (const e of edges) {
    if (seq[e.from] < seq[e.to]) {
      succs[e.from].push(e.to);
      preds[e.to].push(e.from);
    }
  }
  // Rank: longest path from the sources; a source then sits just above its first user.
  const rank = new Array(n).fill(0);
  for (const u of byOrder) for (const p of preds[u]) rank[u] = Math.max(rank[u], rank[p] + 1);
  for (let k = n - 1; k >= 0; --k) {
    const u = byOrder[k];
    if (preds[u].length === 0 && succs[u].length > 0) rank[u] = Math.min(...succs[u].map(s => rank[s])) - 1;
  }
  const layerCount = Math.max(...rank) + 1;
  const layers = Array.from({length: layerCount}, () => []);
  for (const u of byOrder) layers[rank[u]].push(u);

  // Order within layers: barycentres of the neighbours' relative positions.
  const pos = new Array(n);
  const setPositions = layer => layer.forEach((u, i) => (pos[u] = (i + 0.5) / layer.length));
  layers.forEach(setPositions);
  const sortLayer = (layer, neighbours) => {
    const bary = new Map();
    for (const u of layer) {
      const ns = neighbours[u];
      bary.set(u, ns.length ? ns.reduce((s, v) => s + pos[v], 0) / ns.length : pos[u]);
    }
    layer.sort((a, b) => bary.get(a) - bary.get(b));
    setPositions(layer);
  };
  for (let sweep = 0; sweep < LAYOUT.sweeps; ++sweep) {
    if (sweep % 2 === 0) for (let r = 1; r < layerCount; ++r) sortLayer(layers[r], preds);
    else for (let r = layerCount - 2; r >= 0; --r) sortLayer(layers[r], succs);
  }

  // x: layers packed and centred, then each unit pulled towards the mean of
  // its neighbours' centres, keeping the order and the gaps.
  const layerWidth = layer => layer.reduce((s, u) => s + units[u].w, 0) + LAYOUT.gapX * (layer.length - 1);
  const widest = Math.max(...layers.map(layerWidth));
  const x = new Array(n);
  for (const layer of layers) {
    let left = (widest - layerWidth(layer)) / 2;
    for (const u of layer) {
      x[u] = left;
      left += units[u].w + LAYOUT.gapX;
    }
  }
  const centre = u => x[u] + units[u].w / 2;
  const pull = (layer, neighbours) => {
    const want = layer.map(u => {
      const ns = neighbours[u];
      return ns.length ? ns.reduce((s, v) => s + centre(v), 0) / ns.length - units[u].w / 2 : x[u];
    });
    // The average of the leftmost-feasible and rightmost-feasible placements is feasible too.
    const fromLeft = want.slice();
    for (let i = 1; i < layer.length; ++i)
      fromLeft[i] = Math.max(fromLeft[i], fromLeft[i - 1] + units[layer[i - 1]].w + LAYOUT.gapX);
    const fromRight = want.slice();
    for (let i = layer.length - 2; i >= 0; --i)
      fromRight[i] = Math.min(fromRight[i], fromRight[i + 1] - units[layer[i]].w - LAYOUT.gapX);
    layer.forEach((u, i) => (x[u] = (fromLeft[i] + fromRight[i]) / 2));
  };
  for (let pass = 0; pass < LAYOUT.xPasses; ++pass) {
    for (let r = 1; r < layerCount; ++r) pull(layers[r], preds);
    for (let r = layerCount - 2; r >= 0; --r) pull(layers[r], succs);
  }

  const minX = Math.min(...x);
  let top = 0;
  let width = 0;
  for (const layer of layers) {
    const height = Math.max(...layer.map(u => units[u].h));
    for (const u of layer) {
      units[u].x = x[u] - minX;
      units[u].y = top + (height - units[u].h) / 2;
      width = Math.max(width, units[u].x + units[u].w);
    }
    top += height + LAYOUT.gapY;
  }
  return {w: width, h: top - LAYOUT.gapY};
}

// The whole layout: items and frames with absolute x, y, w, h; bundled edges.
// `measure(item)` gives an item's {w, h}; `headerWidth(group)` a frame's
// minimum width.
function layoutView(model, expanded, measure, headerWidth) {
  const start = performance.now();
  const {items, frames, repOf} = visibleItems(model, expanded);
  const edges = bundleEdges(model, items, repOf);

  // Units per frame: its items and its open child groups.
  const frameInfo = new Map();
  for (const f of frames) frameInfo.set(f, {group: f, units: [], edges: new Map(), unit: null});
  for (const f of frames) {
    if (f.parent) {
      const unit = {kind: 'frame', group: f, order: f.order};
      frameInfo.get(f).unit = unit;
      frameInfo.get(f.parent).units.push(unit);
    }
  }
  for (const item of items) {
    const size = measure(item);
    item.w = size.w;
    item.h = size.h;
    frameInfo.get(item.frame).units.push(item);
  }
  for (const info of frameInfo.values()) info.units.forEach((u, i) => (u.slot = i));
  // Each bundled edge constrains the frame that is the lowest common open
  // ancestor of its ends, between the units there that hold them.
  for (const e of edges) {
    let a = e.from;
    let b = e.to;
    let fa = a.frame;
    let fb = b.frame;
    while (fa.depth > fb.depth) [a, fa] = [frameInfo.get(fa).unit, fa.parent];
    while (fb.depth > fa.depth) [b, fb] = [frameInfo.get(fb).unit, fb.parent];
    while (fa !== fb) {
      [a, fa] = [frameInfo.get(fa).unit, fa.parent];
      [b, fb] = [frameInfo.get(fb).unit, fb.parent];
    }
    if (a !== b) frameInfo.get(fa).edges.set(a.slot * 1e6 + b.slot, {from: a.slot, to: b.slot});
  }

  // Bottom up: deeper frames first, so a frame's size is known to its parent.
  const byDepth = frames.slice().sort((p, q) => q.depth - p.depth);
  for (const f of byDepth) {
    const info = frameInfo.get(f);
    const size = layoutLevel(info.units, [...info.edges.values()]);
    info.content = size;
    if (info.unit) {
      info.unit.w = Math.max(size.w, headerWidth(f)) + 2 * LAYOUT.framePad;
      info.unit.h = size.h + LAYOUT.headerH + 2 * LAYOUT.framePad;
    }
  }

  // Top down: absolute positions.
  const placedFrames = [];
  const place = (f, originX, originY) => {
    for (const u of frameInfo.get(f).units) {
      u.x += originX;
      u.y += originY;
      if (u.kind === 'frame') {
        placedFrames.push(u);
        place(u.group, u.x + LAYOUT.framePad, u.y + LAYOUT.headerH + LAYOUT.framePad);
      }
    }
  };
  place(model.root, LAYOUT.framePad, LAYOUT.framePad);
  const root = frameInfo.get(model.root).content;
  return {
    items,
    frames: placedFrames,
    edges,
    width: root.w + 2 * LAYOUT.framePad,
    height: root.h + 2 * LAYOUT.framePad,
    ms: performance.now() - start,
  };
}
