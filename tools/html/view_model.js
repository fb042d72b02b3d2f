// The graph as the view sees it: leaves (graph inputs, nodes, graph outputs)
// in a tree of groups (named scopes, and the graph's inputs and outputs
// grouped by their pytree paths), the value edges between leaves, and each
// node's flops and bytes (computed by graft-inspect, ir::node_cost).
'use strict';

// More graph inputs (outputs) than this are grouped into a collapsible
// "inputs" ("outputs") group, sub-grouped by pytree path; fewer are drawn as
// they are.
const IO_GROUP_THRESHOLD = 12;

function shapeText(t) {
  return t.dtype + '[' + t.shape.join(',') + ']';
}

// A literal's first elements, decoded from its little-endian hex bytes.
function literalText(lit, limit) {
  const sizes = {bool: 1, i32: 4, u32: 4, i64: 8, f32: 4, f64: 8};
  const size = sizes[lit.dtype];
  const count = lit.shape.reduce((a, b) => a * b, 1);
  if (!size || !lit.data) return shapeText(lit);
  const bytes = new Uint8Array(Math.min(lit.data.length / 2, size * limit));
  for (let i = 0; i < bytes.length; ++i) bytes[i] = parseInt(lit.data.substr(2 * i, 2), 16);
  const view = new DataView(bytes.buffer);
  const values = [];
  for (let k = 0; k < Math.min(count, limit) && (k + 1) * size <= bytes.length; ++k) {
    const o = k * size;
    switch (lit.dtype) {
      case 'bool': values.push(view.getUint8(o) ? 'true' : 'false'); break;
      case 'i32': values.push(String(view.getInt32(o, true))); break;
      case 'u32': values.push(String(view.getUint32(o, true))); break;
      case 'i64': values.push(String(view.getBigInt64(o, true))); break;
      case 'f32': values.push(String(view.getFloat32(o, true))); break;
      case 'f64': values.push(String(view.getFloat64(o, true))); break;
    }
  }
  const more = count > values.length ? ', ...' : '';
  return lit.shape.length === 0 ? values[0] : shapeText(lit) + ' {' + values.join(', ') + more + '}';
}

function attrText(a) {
  if ('int' in a) return String(a.int);
  if ('ints' in a) return '(' + a.ints.join(',') + ')';
  if ('float' in a) return String(a.float);
  if ('dtype' in a) return a.dtype;
  if ('string' in a) return JSON.stringify(a.string);
  if ('graphs' in a) return a.graphs.length + (a.graphs.length === 1 ? ' subgraph' : ' subgraphs');
  if ('literal' in a) return literalText(a.literal, 8);
  return JSON.stringify(a);
}

// Pytree path segments of a name: "arg0['block03']['wq']" -> arg0, ['block03'], ['wq'].
function pathSegments(name) {
  return name.match(/\[[^\]]*\]|[^.[\]]+/g) || [name];
}

function isBackwardScope(path) {
  return path === 'backward' || path.startsWith('backward/');
}

class Model {
  constructor(doc, costs) {
    const g = doc.graph;
    this.leaves = [];
    this.groups = new Map();  // key -> group
    this.root = this.newGroup('', '', null, 'scope');
    this.values = new Map();  // value id -> {type, producer: leaf index}
    const inputNames = g.input_names || [];
    const outputNames = g.output_names || [];

    // Leaves in order: inputs, nodes (topological), outputs; `order` is that index.
    const inputParent = this.ioParent('inputs', g.inputs.length);
    g.inputs.forEach((v, i) => {
      const name = inputNames[i] || 'input ' + i;
      const leaf = this.newLeaf('input', name, inputNames[i] ? this.ioGroup(inputParent, name) : inputParent);
      leaf.value = v.id;
      leaf.position = i;
      this.values.set(v.id, {type: v, producer: leaf.at});
    });
    for (const n of g.nodes) {
      const leaf = this.newLeaf('node', n.op, this.scopeGroup(n.scope || ''));
      leaf.node = n;
      const c = costs[n.id];
      if (c) {
        leaf.flops = c[0] || 0;
        leaf.bytes = c[1] || 0;
        leaf.perTrip = c.length > 2 && !!c[2];
      }
      for (const v of n.outputs) this.values.set(v.id, {type: v, producer: leaf.at});
    }
    const outputParent = this.ioParent('outputs', g.outputs.length);
    g.outputs.forEach((id, i) => {
      const name = outputNames[i] || 'output ' + i;
      const leaf = this.newLeaf('output', name, outputNames[i] ? this.ioGroup(outputParent, name) : outputParent);
      leaf.value = id;
      leaf.position = i;
    });

    this.edges = this.valueEdges();
    this.finishGroups(this.root);
    this.setDepths(this.root, 0);
  }

  newGroup(key, name, parent, kind) {
    const group = {key, name, parent, kind, children: [], leaves: [], depth: parent ? parent.depth + 1 : 0,
                   backward: kind === 'scope' && isBackwardScope(key), nodeCount: 0, leafCount: 0,
                   flops: 0, bytes: 0, perTrip: false, order: Infinity};
    this.groups.set(key, group);
    if (parent) parent.children.push(group);
    return group;
  }

  newLeaf(kind, label, group) {
    const leaf = {kind, label, group, order: this.leaves.length, at: this.leaves.length,
                  flops: 0, bytes: 0, perTrip: false};
    this.leaves.push(leaf);
    group.leaves.push(leaf);
    return leaf;
  }

  // The group of a named scope, its ancestors created on the way.
  scopeGroup(scope) {
    if (scope === '') return this.root;
    let group = this.groups.get(scope);
    if (group) return group;
    const slash = scope.lastIndexOf('/');
    const parent = this.scopeGroup(slash < 0 ? '' : scope.slice(0, slash));
    return this.newGroup(scope, scope.slice(slash + 1), parent, 'scope');
  }

  // The group holding the graph's inputs or outputs: the root when there are few.
  ioParent(which, count) {
    if (count <= IO_GROUP_THRESHOLD) return this.root;
    return this.newGroup('(' + which + ')', which, this.root, which);
  }

  // The group of one pytree prefix of an input or output name ("arg0['block03']").
  ioGroup(parent, name) {
    if (parent === this.root) return parent;
    const segments = pathSegments(name);
    let group = parent;
    for (let k = 1; k < segments.length; ++k) {
      const prefix = segments.slice(0, k).join('');
      const key = parent.key + prefix;
      group = this.groups.get(key) || this.newGroup(key, prefix, group, parent.kind);
    }
    return group;
  }

  // One edge per (producer leaf, consumer leaf, value).
  valueEdges() {
    const edges = [];
    const seen = new Set();
    const add = (valueId, to) => {
      const v = this.values.get(valueId);
      if (!v) return;
      const key = v.producer + ':' + to + ':' + valueId;
      if (seen.has(key)) return;
      seen.add(key);
      edges.push({from: v.producer, to, value: valueId});
    };
    for (const leaf of this.leaves) {
      if (leaf.kind === 'node') for (const id of leaf.node.inputs) add(id, leaf.at);
      if (leaf.kind === 'output') add(leaf.value, leaf.at);
    }
    return edges;
  }

  // Sizes, costs and first-leaf order of every group, bottom up; pytree
  // groups holding a single child are folded into their parent.
  finishGroups(group) {
    for (const child of [...group.children]) this.finishGroups(child);
    if (group.kind !== 'scope') {
      for (const child of [...group.children])
        if (child.children.length + child.leaves.length === 1) this.fold(child);
    }
    for (const child of group.children) {
      group.nodeCount += child.nodeCount;
      group.leafCount += child.leafCount;
      group.flops += child.flops;
      group.bytes += child.bytes;
      group.perTrip = group.perTrip || child.perTrip;
      group.order = Math.min(group.order, child.order);
    }
    for (const leaf of group.leaves) {
      group.nodeCount += leaf.kind === 'node' ? 1 : 0;
      group.leafCount += 1;
      group.flops += leaf.flops;
      group.bytes += leaf.bytes;
      group.perTrip = group.perTrip || leaf.perTrip;
      group.order = Math.min(group.order, leaf.order);
    }
  }

  // Depths again after folding moved groups up.
  setDepths(group, depth) {
    group.depth = depth;
    for (const child of group.children) this.setDepths(child, depth + 1);
  }

  // Moves a group's children and leaves into its parent, in its place.
  fold(group) {
    const parent = group.parent;
    for (const child of group.children) child.parent = parent;
    parent.children.splice(parent.children.indexOf(group), 1, ...group.children);
    for (const leaf of group.leaves) {
      leaf.group = parent;
      parent.leaves.push(leaf);
    }
    parent.leaves.sort((a, b) => a.order - b.order);
    this.groups.delete(group.key);
  }

  // The groups from the top level down to `leaf`'s own (the root left out).
  ancestors(leaf) {
    const chain = [];
    for (let g = leaf.group; g && g !== this.root; g = g.parent) chain.unshift(g);
    return chain;
  }

  valueText(id) {
    const v = this.values.get(id);
    return '%' + id + (v ? ': ' + shapeText(v.type) : '');
  }

  // What search reads of a leaf: its fields (op or name, scope, values
  // defined and used, source line) and the line joining them.
  searchFields(leaf) {
    if (leaf.searchFields) return leaf.searchFields;
    let fields;
    if (leaf.kind === 'node') {
      const n = leaf.node;
      fields = [n.op, n.scope || '', ...n.outputs.map(v => '%' + v.id), '<-', ...n.inputs.map(id => '%' + id),
                n.loc ? n.loc.file + ':' + n.loc.line : ''];
    } else {
      fields = [leaf.label, leaf.kind, '%' + leaf.value];
    }
    leaf.searchFields = {fields, line: fields.join(' '), lower: fields.join(' ').toLowerCase()};
    return leaf.searchFields;
  }

  // Leaves matching `query`: a regular expression (matching the line or any
  // one field, so ^ and $ anchor a field), or whitespace-separated terms that
  // must all occur (a term %N names exactly value N). Case-insensitive.
  // Throws SyntaxError for a bad regular expression.
  search(query, asRegex) {
    if (query.trim() === '') return [];
    let test;
    if (asRegex) {
      const re = new RegExp(query, 'i');
      test = s => re.test(s.line) || s.fields.some(f => re.test(f));
    } else {
      const terms = query.toLowerCase().split(/\s+/).filter(t => t);
      test = s => terms.every(t => (/^%\d+$/.test(t) ? s.fields.includes(t) : s.lower.includes(t)));
    }
    return this.leaves.filter(leaf => test(this.searchFields(leaf)));
  }
}

// One-line summaries of a node's subgraphs (control-flow bodies, custom rules).
function subgraphSummaries(node) {
  const lines = [];
  for (const [name, a] of Object.entries(node.attrs || {})) {
    if (!('graphs' in a)) continue;
    a.graphs.forEach((sub, i) => {
      const label = a.graphs.length > 1 ? name + '[' + i + ']' : name;
      if (!sub) {
        lines.push({label, text: '(none)'});
        return;
      }
      const ops = new Map();
      const countOps = graph => {
        for (const n of graph.nodes) {
          ops.set(n.op, (ops.get(n.op) || 0) + 1);
          for (const b of Object.values(n.attrs || {})) if (b.graphs) b.graphs.forEach(s => s && countOps(s));
        }
      };
      countOps(sub);
      const histogram = [...ops.entries()].sort((x, y) => y[1] - x[1]).map(([op, k]) => op + ' ' + k);
      lines.push({label, text: sub.nodes.length + ' nodes; in (' + sub.inputs.map(shapeText).join(', ') + ') out (' +
                               sub.outputs.length + ' values); ' + histogram.join(', ')});
    });
  }
  return lines;
}
