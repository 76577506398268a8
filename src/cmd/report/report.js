// Draws the charts and game boards of an xqz report from the JSON blob #xqz-data.
// No libraries and no network: SVG built with the DOM. Each part is drawn inside its
// own try/catch so one failure shows a message instead of blanking the page; when
// everything is drawn, <body data-rendered="ok"> (tests look for it).
(function () {
  'use strict';
  const SVG = 'http://www.w3.org/2000/svg';
  const COLORS = ['#1f6fb4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#e377c2', '#17becf'];
  const errors = [];

  function svg(tag, attrs, parent) {
    const e = document.createElementNS(SVG, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function html(tag, attrs, text, parent) {
    const e = document.createElement(tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== null && text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  function fin(v) { return typeof v === 'number' && isFinite(v); }
  function fmt(v) {
    if (!fin(v)) return String(v);
    const a = Math.abs(v);
    if (a !== 0 && (a >= 1e6 || a < 1e-3)) return v.toExponential(1);
    if (Number.isInteger(v)) return String(v);
    return a >= 100 ? v.toFixed(0) : String(parseFloat(v.toPrecision(3)));
  }
  function when(t) { return fin(t) ? new Date(t * 1000).toISOString().replace('T', ' ').slice(0, 19) + ' UTC' : ''; }

  // About n round tick values covering [lo, hi].
  function ticks(lo, hi, n) {
    const span = hi - lo;
    const raw = span / Math.max(1, n);
    const mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 2.5, 5, 10].map(function (m) { return m * mag; }).find(function (s) { return span / s <= n; }) || 10 * mag;
    const out = [];
    for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Math.abs(v) < step * 1e-9 ? 0 : v);
    return out;
  }

  // spec: {title, xLabel, yLabel, series: [{name, points: [{x, y, lo, hi, tip, clamp, hollow}], noLine}], yMin, yMax,
  //        refs: [{y, label}] (labelled horizontal reference lines, inside the y range)}
  function chart(host, spec) {
    const series = spec.series.filter(function (s) { return s.points.length > 0; });
    if (series.length === 0) return false;
    const W = 520, H = 280, L = 62, R = 16, T = 28, B = 44;
    const pw = W - L - R, ph = H - T - B;
    const xs = [], ys = [];
    series.forEach(function (s) {
      s.points.forEach(function (p) {
        if (fin(p.x)) xs.push(p.x);
        [p.y, p.lo, p.hi].forEach(function (v) { if (fin(v)) ys.push(v); });
      });
    });
    if (xs.length === 0) return false;
    const refs = (spec.refs || []).filter(function (r) { return fin(r.y); });
    refs.forEach(function (r) { ys.push(r.y); });
    let x0 = Math.min.apply(null, xs), x1 = Math.max.apply(null, xs);
    let y0 = ys.length ? Math.min.apply(null, ys) : 0, y1 = ys.length ? Math.max.apply(null, ys) : 1;
    if (fin(spec.yMin)) y0 = Math.min(y0, spec.yMin);
    if (fin(spec.yMax)) y1 = Math.max(y1, spec.yMax);
    if (x0 === x1) { x0 -= 1; x1 += 1; }
    if (y0 === y1) { const d = Math.abs(y0) * 0.1 || 1; y0 -= d; y1 += d; }
    const pad = (y1 - y0) * 0.06;
    y0 -= pad; y1 += pad;
    const sx = function (x) { return L + (x - x0) / (x1 - x0) * pw; };
    const sy = function (y) { return T + (1 - (y - y0) / (y1 - y0)) * ph; };

    const root = svg('svg', { class: 'chart-svg', width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, role: 'img' }, host);
    svg('title', {}, root).textContent = spec.title;
    svg('text', { x: L, y: 17, class: 'title' }, root).textContent = spec.title;
    ticks(y0, y1, 6).forEach(function (v) {
      svg('line', { x1: L, x2: L + pw, y1: sy(v), y2: sy(v), class: 'grid' }, root);
      svg('text', { x: L - 6, y: sy(v) + 4, 'text-anchor': 'end' }, root).textContent = fmt(v);
    });
    ticks(x0, x1, 6).forEach(function (v) {
      svg('line', { x1: sx(v), x2: sx(v), y1: T, y2: T + ph, class: 'grid' }, root);
      svg('text', { x: sx(v), y: T + ph + 15, 'text-anchor': 'middle' }, root).textContent = fmt(v);
    });
    refs.forEach(function (r) {
      const g = svg('g', { class: 'ref', 'data-ref': r.label }, root);
      svg('line', { x1: L, x2: L + pw, y1: sy(r.y), y2: sy(r.y), stroke: '#8a8f99', 'stroke-dasharray': '5 4' }, g);
      svg('text', { x: L + pw - 4, y: sy(r.y) - 3, 'text-anchor': 'end', class: 'ref-label' }, g).textContent = r.label;
    });
    svg('rect', { x: L, y: T, width: pw, height: ph, fill: 'none', class: 'axis' }, root);
    svg('text', { x: L + pw / 2, y: H - 6, 'text-anchor': 'middle' }, root).textContent = spec.xLabel;
    svg('text', { x: 13, y: T + ph / 2, 'text-anchor': 'middle', transform: 'rotate(-90 13 ' + (T + ph / 2) + ')' }, root).textContent = spec.yLabel;

    const legend = html('div', { class: 'legend' }, null, host);
    series.forEach(function (s, i) {
      const color = s.color || COLORS[i % COLORS.length];
      const item = html('span', {}, null, legend);
      html('i', { style: 'background:' + color }, null, item);
      item.appendChild(document.createTextNode(s.name));
      const g = svg('g', { class: 'series', 'data-series': s.name }, root);
      const pts = s.points.filter(function (p) { return fin(p.x); }).slice().sort(function (a, b) { return a.x - b.x; });
      const line = pts.filter(function (p) { return fin(p.y); });
      if (!s.noLine && line.length > 1) {
        svg('polyline', {
          points: line.map(function (p) { return sx(p.x).toFixed(1) + ',' + sy(p.y).toFixed(1); }).join(' '),
          fill: 'none', stroke: color, 'stroke-width': 1.6,
        }, g);
      }
      const dots = pts.length <= 60;
      pts.forEach(function (p) {
        const x = sx(p.x);
        if (fin(p.lo) && fin(p.hi)) {
          svg('line', { x1: x, x2: x, y1: sy(p.lo), y2: sy(p.hi), stroke: color, 'stroke-width': 1, opacity: 0.7 }, g);
          svg('line', { x1: x - 3, x2: x + 3, y1: sy(p.lo), y2: sy(p.lo), stroke: color, opacity: 0.7 }, g);
          svg('line', { x1: x - 3, x2: x + 3, y1: sy(p.hi), y2: sy(p.hi), stroke: color, opacity: 0.7 }, g);
        }
        let mark = null;
        if (fin(p.y) && (dots || p.tip)) {
          mark = svg('circle', { cx: x, cy: sy(p.y), r: 3.2, fill: p.hollow ? '#fff' : color, stroke: color, 'stroke-width': 1.5, class: 'point' }, g);
        } else if (p.clamp === 'top' || p.clamp === 'bottom') {
          const y = p.clamp === 'top' ? T + 2 : T + ph - 2;
          const d = p.clamp === 'top' ? 'M' + (x - 5) + ',' + (y + 8) + 'L' + (x + 5) + ',' + (y + 8) + 'L' + x + ',' + y + 'Z'
            : 'M' + (x - 5) + ',' + (y - 8) + 'L' + (x + 5) + ',' + (y - 8) + 'L' + x + ',' + y + 'Z';
          mark = svg('path', { d: d, fill: p.hollow ? '#fff' : color, stroke: color, class: 'point clamp' }, g);
        }
        if (mark && p.tip) svg('title', {}, mark).textContent = p.tip;
      });
    });
    host.setAttribute('data-drawn', '1');
    return true;
  }

  function eloTip(r, who) {
    let t = who + (fin(r.step) ? ' (step ' + r.step + ')' : '');
    if (r.opponent) t += ' vs ' + r.opponent;
    if (fin(r.elo)) t += ': Elo ' + fmt(Math.round(r.elo)) + (fin(r.lo) && fin(r.hi) ? ' [' + Math.round(r.lo) + ', ' + Math.round(r.hi) + ']' : '');
    else if (r.unbounded) t += ': Elo unbounded';
    if (fin(r.score)) t += ', score ' + (100 * r.score).toFixed(1) + '%';
    if (fin(r.games)) t += ' of ' + r.games + ' games';
    if (r.reason) t += ', ' + r.reason;
    if (fin(r.time)) t += '\n' + when(r.time);
    return t;
  }

  function drawCharts(data) {
    const byName = {};
    document.querySelectorAll('.chart[data-chart]').forEach(function (el) { byName[el.getAttribute('data-chart')] = el; });

    if (byName.elo) {
      const groups = {};
      data.ratings.forEach(function (r, i) {
        (groups[r.opponent] = groups[r.opponent] || []).push({
          x: fin(r.step) ? r.step : i, y: r.elo, lo: r.lo, hi: r.hi, clamp: r.unbounded, tip: eloTip(r, r.model),
        });
      });
      chart(byName.elo, {
        title: 'Elo against the baselines', xLabel: 'training step', yLabel: 'Elo',
        series: Object.keys(groups).sort().map(function (k) { return { name: 'vs ' + k, points: groups[k] }; }),
      });
    }
    if (byName.gate) {
      const pts = data.gates.filter(function (g) { return fin(g.games) ? g.games > 0 : true; }).map(function (g, i) {
        return { x: fin(g.step) ? g.step : i, y: g.elo, lo: g.lo, hi: g.hi, clamp: g.unbounded, hollow: g.accepted === false, tip: eloTip(g, g.candidate) + (g.accepted === true ? ' — accepted' : g.accepted === false ? ' — rejected' : '') };
      });
      chart(byName.gate, { title: 'Gating: candidate vs accepted', xLabel: 'training step', yLabel: 'Elo', series: [{ name: 'candidate', points: pts, noLine: true }] });
    }
    // The learning curve: one chart per x axis, one series per rating source, and the
    // anchors from the one just below the curve to the one just above it.
    const curve = data.curve || [];
    if (curve.length && (byName['curve-time'] || byName['curve-positions'] || byName['curve-steps'])) {
      const ys = [];
      curve.forEach(function (p) { [p.lower, p.upper].forEach(function (v) { if (fin(v)) ys.push(v); }); });
      const lo = Math.min.apply(null, ys), hi = Math.max.apply(null, ys);
      const anchors = (data.anchors || []).slice().sort(function (a, b) { return a.elo - b.elo; });
      const below = anchors.filter(function (a) { return a.elo < lo; }).pop();
      const above = anchors.filter(function (a) { return a.elo > hi; })[0];
      const refs = anchors.filter(function (a) { return a === below || a === above || (a.elo >= lo && a.elo <= hi); })
        .map(function (a) { return { y: a.elo, label: a.name + ' (' + (a.elo > 0 ? '+' : '') + Math.round(a.elo) + ')' }; });
      const maxSeconds = Math.max.apply(null, curve.map(function (p) { return fin(p.seconds) ? p.seconds : 0; }));
      const hours = maxSeconds >= 7200;
      const sources = [['in-run', '#1f6fb4', false], ['final', '#d62728', true], ['post-run', '#2ca02c', false]];
      const tip = function (p) {
        let t = p.model + (fin(p.step) ? ' (step ' + p.step + ')' : '') + ', ' + p.source + ': Elo ' + Math.round(p.elo) +
          ' [' + Math.round(p.lower) + ', ' + Math.round(p.upper) + '], ' + p.games + ' games';
        if (fin(p.visits)) t += ' at ' + p.visits + ' visits';
        if (p.time_control) t += ', ' + p.time_control;
        return t;
      };
      const axes = [
        ['curve-time', 'Elo against wall time', hours ? 'wall time (hours)' : 'wall time (minutes)',
          function (p) { return fin(p.seconds) ? p.seconds / (hours ? 3600 : 60) : null; }],
        ['curve-positions', 'Elo against self-play positions', 'self-play positions', function (p) { return p.positions; }],
        ['curve-steps', 'Elo against training steps', 'training step', function (p) { return p.step; }],
      ];
      axes.forEach(function (a) {
        if (!byName[a[0]]) return;
        chart(byName[a[0]], {
          title: a[1], xLabel: a[2], yLabel: 'Elo (anchored)', refs: refs,
          series: sources.map(function (s) {
            return {
              name: s[0], color: s[1], noLine: s[2],
              points: curve.filter(function (p) { return p.source === s[0]; }).map(function (p) {
                return { x: a[3](p), y: p.elo, lo: p.lower, hi: p.upper, tip: tip(p) };
              }),
            };
          }),
        });
      });
    }
    function seriesOf(rows, keys, xKey, scale) {
      return keys.map(function (k) {
        return {
          name: k,
          points: rows.filter(function (r) { return fin(r[k]) && fin(r[xKey]); }).map(function (r) {
            return { x: r[xKey], y: r[k] * (scale || 1) };
          }),
        };
      });
    }
    const trainKeys = {};
    data.train.forEach(function (r) { Object.keys(r).forEach(function (k) { trainKeys[k] = true; }); });
    const tk = Object.keys(trainKeys).sort();
    // Held-out losses (games never trained on) are drawn beside the training losses:
    // a training loss that falls while its held-out twin rises is memorisation.
    const holdout = data.holdout || [];
    const holdoutKeys = {};
    holdout.forEach(function (r) { Object.keys(r).forEach(function (k) { holdoutKeys[k] = true; }); });
    const hk = Object.keys(holdoutKeys).sort();
    if (byName.loss) {
      chart(byName.loss, { title: 'Losses (training and held-out)', xLabel: 'training step', yLabel: 'loss',
        series: seriesOf(data.train, tk.filter(function (k) { return /loss$/.test(k); }), 'step')
          .concat(seriesOf(holdout, hk.filter(function (k) { return /loss$/.test(k); }), 'step')) });
    }
    if (byName.accuracy) {
      chart(byName.accuracy, { title: 'Accuracies (training and held-out)', xLabel: 'training step', yLabel: 'accuracy',
        series: seriesOf(data.train, tk.filter(function (k) { return /acc(uracy)?$/.test(k); }), 'step')
          .concat(seriesOf(holdout, hk.filter(function (k) { return /acc(uracy)?$/.test(k); }), 'step')) });
    }
    if (byName.lr) {
      chart(byName.lr, { title: 'Learning rate', xLabel: 'training step', yLabel: 'lr',
        series: seriesOf(data.train, tk.filter(function (k) { return k === 'lr' || k === 'learning_rate'; }), 'step') });
    }
    const sp = data.selfplay;
    const xLabel = sp.some(function (r) { return fin(r.games) || fin(r.total_games); }) ? 'self-play games' : 'report';
    if (byName.results) {
      const rows = sp.filter(function (r) { return fin(r.games) && r.games > 0; });
      chart(byName.results, { title: 'Results (share of games)', xLabel: xLabel, yLabel: '%', yMin: 0, yMax: 100,
        series: [['red_wins', 'red wins', '#d62728'], ['black_wins', 'black wins', '#222'], ['draws', 'draws', '#2ca02c']].map(function (s) {
          return { name: s[1], color: s[2], points: rows.filter(function (r) { return fin(r[s[0]]); }).map(function (r) { return { x: r.x, y: 100 * r[s[0]] / r.games }; }) };
        }) });
    }
    if (byName.length) {
      chart(byName.length, { title: 'Game length', xLabel: xLabel, yLabel: 'plies', series: seriesOf(sp, ['average_length'], 'x') });
    }
    if (byName.rates) {
      // Soft resignation: the share of positions searched while a side would have
      // resigned (cheaper searches, few training records); absent without it.
      const decided = {
        name: 'decided_positions (soft resignation)',
        points: sp.filter(function (r) { return fin(r.decided_positions) && fin(r.positions) && r.positions > 0 && fin(r.x); })
          .map(function (r) { return { x: r.x, y: 100 * r.decided_positions / r.positions }; }),
      };
      const soft = decided.points.some(function (p) { return p.y > 0; });
      chart(byName.rates, { title: 'Cache hits, resignation false positives' + (soft ? ' and decided positions' : ''), xLabel: xLabel, yLabel: '%', yMin: 0,
        series: seriesOf(sp, ['cache_hit_rate', 'resign_false_positive_rate'], 'x', 100).concat(soft ? [decided] : []) });
    }
    // The threshold in force beside those false positives: calibrated from the
    // played-out games, it moves within [-1, -0.5] (-1: resignation off).
    if (byName.resign) {
      chart(byName.resign, { title: 'Resignation threshold', xLabel: xLabel, yLabel: 'root value (win − loss)', yMin: -1, yMax: -0.5,
        series: seriesOf(sp, ['resign_threshold'], 'x') });
    }
    if (byName.batch) {
      chart(byName.batch, { title: 'Average evaluation batch', xLabel: xLabel, yLabel: 'positions', yMin: 0, series: seriesOf(sp, ['average_batch'], 'x') });
    }
  }

  // ---- boards --------------------------------------------------------------
  const NAMES = { K: '帥', A: '仕', B: '相', E: '相', N: '傌', H: '傌', R: '俥', C: '炮', P: '兵',
    k: '將', a: '士', b: '象', e: '象', n: '馬', h: '馬', r: '車', c: '砲', p: '卒' };
  const S = 34, M = 26; // cell size, margin

  // FEN board -> {"file,rank": letter}; rank 9 is the first FEN row.
  function parseFen(fen) {
    const rows = fen.split(' ')[0].split('/');
    const out = {};
    rows.forEach(function (row, i) {
      let file = 0;
      for (const ch of row) {
        if (ch >= '0' && ch <= '9') file += Number(ch);
        else { out[file + ',' + (9 - i)] = ch; file += 1; }
      }
    });
    return out;
  }
  function px(file) { return M + file * S; }
  function py(rank) { return M + (9 - rank) * S; }
  function square(text) { return { file: text.charCodeAt(0) - 97, rank: text.charCodeAt(1) - 48 }; }

  function drawBoard(host, fen, lastMove) {
    host.textContent = '';
    const W = 2 * M + 8 * S, H = 2 * M + 9 * S;
    const root = svg('svg', { class: 'board', width: W, height: H, viewBox: '0 0 ' + W + ' ' + H }, host);
    svg('rect', { x: 0, y: 0, width: W, height: H, fill: '#f3d9a4', rx: 6 }, root);
    const lines = svg('g', { stroke: '#6b4a1f', 'stroke-width': 1 }, root);
    for (let r = 0; r <= 9; r++) svg('line', { x1: px(0), x2: px(8), y1: py(r), y2: py(r) }, lines);
    for (let f = 0; f <= 8; f++) {
      if (f === 0 || f === 8) svg('line', { x1: px(f), x2: px(f), y1: py(9), y2: py(0) }, lines);
      else {
        svg('line', { x1: px(f), x2: px(f), y1: py(9), y2: py(5) }, lines);
        svg('line', { x1: px(f), x2: px(f), y1: py(4), y2: py(0) }, lines);
      }
    }
    [[0, 2], [7, 9]].forEach(function (p) { // the palaces
      svg('line', { x1: px(3), y1: py(p[0]), x2: px(5), y2: py(p[1]) }, lines);
      svg('line', { x1: px(5), y1: py(p[0]), x2: px(3), y2: py(p[1]) }, lines);
    });
    svg('rect', { x: px(0) - 4, y: py(9) - 4, width: 8 * S + 8, height: 9 * S + 8, fill: 'none', stroke: '#6b4a1f', 'stroke-width': 2 }, root);
    const river = svg('g', { class: 'river', fill: '#8a6a3a', 'font-size': 18, 'text-anchor': 'middle', 'dominant-baseline': 'central' }, root);
    svg('text', { x: px(2), y: (py(4) + py(5)) / 2 }, river).textContent = '楚 河';
    svg('text', { x: px(6), y: (py(4) + py(5)) / 2 }, river).textContent = '漢 界';
    const labels = svg('g', { fill: '#7a6040', 'font-size': 10, 'text-anchor': 'middle' }, root);
    for (let f = 0; f <= 8; f++) svg('text', { x: px(f), y: H - 4 }, labels).textContent = String.fromCharCode(97 + f);
    for (let r = 0; r <= 9; r++) svg('text', { x: 8, y: py(r) + 3 }, labels).textContent = String(r);
    if (lastMove) {
      const a = square(lastMove.slice(0, 2)), b = square(lastMove.slice(2, 4));
      svg('circle', { cx: px(a.file), cy: py(a.rank), r: S * 0.2, fill: 'none', stroke: '#1f6fb4', 'stroke-width': 2, class: 'last-from' }, root);
      svg('rect', { x: px(b.file) - S / 2, y: py(b.rank) - S / 2, width: S, height: S, fill: 'none', stroke: '#1f6fb4', 'stroke-width': 2, rx: 4, class: 'last-to' }, root);
    }
    const pieces = parseFen(fen);
    Object.keys(pieces).forEach(function (key) {
      const ch = pieces[key];
      const fr = key.split(',').map(Number);
      const red = ch === ch.toUpperCase();
      const g = svg('g', { class: 'piece ' + (red ? 'red' : 'black'), 'data-square': String.fromCharCode(97 + fr[0]) + fr[1], 'data-piece': ch }, root);
      svg('circle', { cx: px(fr[0]), cy: py(fr[1]), r: S * 0.44, fill: '#fdf3dc', 'stroke-width': 2 }, g);
      svg('text', { x: px(fr[0]), y: py(fr[1]) + 1 }, g).textContent = NAMES[ch] || ch;
    });
  }

  function viewer(host, g, index) {
    const box = html('div', { class: 'game', tabindex: '0', 'data-game': String(index), 'data-kind': g.kind }, null, host);
    html('h3', {}, g.title, box);
    const players = (g.red || '?') + ' (red) vs ' + (g.black || '?') + ' (black) · ' + g.result +
      (g.termination ? ' · ' + g.termination : '') + ' · ' + g.moves.length + ' plies';
    html('div', { class: 'meta' }, players, box);
    html('div', { class: 'meta' }, g.source + (g.note ? ' (' + g.note + ')' : ''), box);
    const row = html('div', { class: 'game-row' }, null, box);
    const boardHost = html('div', { class: 'board-host' }, null, row);
    const side = html('div', { class: 'game-side' }, null, row);
    const controls = html('div', { class: 'controls' }, null, side);
    const buttons = [['«', 'first'], ['‹', 'prev'], ['›', 'next'], ['»', 'last']].map(function (b) {
      return html('button', { type: 'button', title: b[1], 'data-action': b[1] }, b[0], controls);
    });
    const counter = html('span', { class: 'ply' }, '', controls);
    const fenBox = html('input', { class: 'fen', readonly: '', title: 'FEN of the shown position' }, null, side);
    const list = html('div', { class: 'moves' }, null, side);

    const parts = g.fens[0].split(' ');
    let number = Number(parts[5]) || 1;
    const blackFirst = parts[1] === 'b';
    const links = [];
    let mrow = null;
    g.moves.forEach(function (m, i) {
      const redMove = blackFirst ? i % 2 === 1 : i % 2 === 0;
      if (redMove || i === 0) {
        mrow = html('div', { class: 'mrow' }, null, list);
        html('span', { class: 'num' }, number + '.', mrow);
        if (!redMove) html('span', {}, '…', mrow);
        number += 1;
      }
      const a = html('a', { 'data-ply': String(i + 1), title: g.iccs[i] }, m, mrow);
      links.push(a);
    });

    let ply = 0;
    function show(p) {
      ply = Math.max(0, Math.min(g.fens.length - 1, p));
      drawBoard(boardHost, g.fens[ply], ply > 0 ? g.iccs[ply - 1] : null);
      counter.textContent = 'ply ' + ply + '/' + (g.fens.length - 1);
      fenBox.value = g.fens[ply];
      links.forEach(function (a, i) { a.classList.toggle('cur', i === ply - 1); });
      if (ply > 0) {
        const cur = links[ply - 1];
        if (cur.offsetTop < list.scrollTop || cur.offsetTop > list.scrollTop + list.clientHeight - 20) list.scrollTop = cur.offsetTop - list.clientHeight / 2;
      }
    }
    const step = { first: function () { show(0); }, prev: function () { show(ply - 1); }, next: function () { show(ply + 1); }, last: function () { show(g.fens.length - 1); } };
    buttons.forEach(function (b) { b.addEventListener('click', step[b.getAttribute('data-action')]); });
    list.addEventListener('click', function (e) { const p = e.target.getAttribute && e.target.getAttribute('data-ply'); if (p) show(Number(p)); });
    box.addEventListener('keydown', function (e) {
      const keys = { ArrowLeft: 'prev', ArrowRight: 'next', Home: 'first', End: 'last' };
      if (keys[e.key]) { step[keys[e.key]](); e.preventDefault(); }
    });
    show(0);
  }

  function attempt(what, f) {
    try { f(); } catch (e) {
      errors.push(what + ': ' + e);
      const main = document.querySelector('main') || document.body;
      html('p', { class: 'js-error' }, 'Could not draw the ' + what + ': ' + e, main);
    }
  }

  let data = null;
  attempt('report data', function () { data = JSON.parse(document.getElementById('xqz-data').textContent); });
  if (data) {
    attempt('charts', function () { drawCharts(data); });
    attempt('games', function () {
      const host = document.getElementById('games-host');
      data.games.forEach(function (g, i) { attempt('game ' + (i + 1), function () { viewer(host, g, i); }); });
    });
  }
  document.body.setAttribute('data-rendered', errors.length ? 'errors' : 'ok');
})();
