// The page's self-test, for the browser test of graft-inspect html
// (tests/tools/html_view_test.cpp): with a URL hash such as
//   #selftest=open;expand:block03;search:dot_general backward/block07/mlp;pick:0
// it performs each action through the page's own controls (clicks on the
// drawn boxes and headers, typing into the search box, clicking a hit) and
// writes what the page then shows into <pre id="selftest">: per step a line
// "step K: ACTION", then one "name=value" line per observation, counted from
// the drawn SVG, not from the view's internal state.
'use strict';

function selftestObserve(lines) {
  const canvas = $('canvas');
  const keys = selector => [...canvas.querySelectorAll(selector)].map(e => e.dataset.key);
  const count = selector => canvas.querySelectorAll(selector).length;
  lines.push('visible_boxes=' + count('g.box'));
  lines.push('visible_nodes=' + count('g.node'));
  lines.push('visible_io=' + count('g.io'));
  lines.push('visible_frames=' + count('g.frame'));
  lines.push('visible_edges=' + count('path.edge'));
  lines.push('backward_boxes=' + count('g.box.bwd'));
  lines.push('collapsed=' + keys('g.box').join(','));
  lines.push('expanded=' + keys('g.frame').join(','));
  lines.push('layout_ms=' + view.layout.ms.toFixed(2));
  lines.push('draw_ms=' + view.drawMs.toFixed(2));
  lines.push('heated=' + count('g.heated'));
  const t = view.transform;
  lines.push('transform=' + [t.x, t.y, t.s].map(v => v.toFixed(3)).join(','));
  lines.push('hit_marks=' + count('g.hit') + ',' + count('g.has-hit'));
}

function selftestSelected(lines) {
  const sel = view.selected;
  if (!sel || !sel.leaf) {
    lines.push('selected=' + (sel && sel.group ? 'group ' + sel.group.key : 'none'));
    return;
  }
  const leaf = sel.leaf;
  lines.push('selected=' + (leaf.kind === 'node' ? 'node ' + leaf.node.id : leaf.kind + ' ' + leaf.position));
  lines.push('selected_label=' + (leaf.kind === 'node' ? leaf.node.op : leaf.label));
  if (leaf.kind === 'node') lines.push('selected_scope=' + (leaf.node.scope || ''));
  const drawn = $('canvas').querySelectorAll('g.selected[data-index]');
  lines.push('selected_drawn=' + drawn.length);
  if (drawn.length === 1) {
    const r = drawn[0].getBoundingClientRect();
    const c = $('canvas').getBoundingClientRect();
    const off = Math.hypot(r.left + r.width / 2 - (c.left + c.width / 2), r.top + r.height / 2 - (c.top + c.height / 2));
    lines.push('centred=' + (off < 3 ? 1 : 0));
  }
  lines.push('panel_title=' + ($('panel').querySelector('h2') || {textContent: ''}).textContent);
  const rows = [...$('panel').querySelectorAll('tr')].map(tr => tr.firstChild.textContent);
  lines.push('panel_rows=' + rows.join(','));
}

function selftestAct(action, lines) {
  const colon = action.indexOf(':');
  const verb = colon < 0 ? action : action.slice(0, colon);
  const arg = colon < 0 ? '' : action.slice(colon + 1);
  const click = element => {
    if (!element) throw new Error('nothing to click for ' + action);
    element.dispatchEvent(new MouseEvent('click', {bubbles: true}));
  };
  const find = selector => [...$('canvas').querySelectorAll(selector)];
  switch (verb) {
    case 'open':
      break;
    case 'expand':
      click(find('g.box').find(e => e.dataset.key === arg));
      break;
    case 'collapse':
      click(find('g.frame-header').find(e => e.dataset.key === arg)?.querySelector('rect'));
      break;
    case 'select':
      click(find('g.node').find(e => e.dataset.node === arg));
      break;
    case 'search':
    case 'regex':
      $('regex').checked = verb === 'regex';
      $('search').value = arg;
      $('search').dispatchEvent(new Event('input'));
      lines.push('search_hits=' + view.hits.length);
      lines.push('listed=' + $('hits').children.length);
      lines.push('summary=' + $('search-summary').textContent);
      for (const li of [...$('hits').children].slice(0, 3)) lines.push('hit=' + li.textContent);
      break;
    case 'pick':
      click($('hits').children[Number(arg)]);
      break;
    case 'overlay':
      $('overlay').value = arg;
      $('overlay').dispatchEvent(new Event('change'));
      lines.push('legend=' + $('legend').textContent);
      break;
    case 'pan': {  // pan:DX,DY drags the background by that many pixels
      const [dx, dy] = arg.split(',').map(Number);
      const r = $('canvas').getBoundingClientRect();
      const at = (x, y) => ({clientX: r.left + x, clientY: r.top + y, pointerId: 1, button: 0, bubbles: true});
      $('canvas').dispatchEvent(new PointerEvent('pointerdown', at(5, 5)));
      $('canvas').dispatchEvent(new PointerEvent('pointermove', at(5 + dx, 5 + dy)));
      $('canvas').dispatchEvent(new PointerEvent('pointerup', at(5 + dx, 5 + dy)));
      $('canvas').dispatchEvent(new MouseEvent('click', at(5 + dx, 5 + dy)));  // as a browser does; a drag's click is ignored
      break;
    }
    case 'zoom': {  // zoom:DELTA turns the wheel by DELTA over the canvas's centre
      const r = $('canvas').getBoundingClientRect();
      $('canvas').dispatchEvent(new WheelEvent('wheel', {clientX: r.left + r.width / 2, clientY: r.top + r.height / 2,
                                                         deltaY: Number(arg), bubbles: true, cancelable: true}));
      break;
    }
    case 'expandall':
      click($('expand-all'));
      break;
    case 'collapseall':
      click($('collapse-all'));
      break;
    default:
      throw new Error('unknown self-test action ' + verb);
  }
}

function selftest() {
  const match = /^#selftest=(.*)$/.exec(location.hash);
  if (!match) return;
  const out = $('selftest');
  const lines = [];
  const actions = match[1].split(';').filter(a => a).map(decodeURIComponent);  // ';' in an argument is %3B
  actions.forEach((action, k) => {
    lines.push('step ' + k + ': ' + action);
    try {
      selftestAct(action, lines);
      selftestObserve(lines);
      selftestSelected(lines);
    } catch (e) {
      lines.push('error=' + e.message);
    }
  });
  lines.push('errors=' + view.errors.length + (view.errors.length ? ' ' + view.errors.join(' | ') : ''));
  lines.push('done=1');
  out.textContent = lines.join('\n') + '\n';  // left hidden: it is read from the DOM
}

selftest();
