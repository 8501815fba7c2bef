// The fathom runs page: several finished runs (`fathom dashboard RUN_DIR...`)
// overlaid on one set of charts, read once from /api/runs.
(function () {
  'use strict';

  var COLORS = ['#2563eb', '#dc2626', '#0f766e', '#7c3aed', '#ea580c', '#ca8a04', '#db2777', '#0891b2', '#4d7c0f', '#6b7280'];
  var probe = window.fathomDashboard = { runs: 0, series: 0, errors: [] };
  window.addEventListener('error', function (e) { probe.errors.push(String(e.message || e)); });

  function $(id) { return document.getElementById(id); }
  function color(i) { return COLORS[i % COLORS.length]; }
  var F = window.fathomFormat, fmt = F.fmt, fmtTick = F.tick, fmtInt = F.int;
  function fmtDuration(s) { return F.duration(s, true); }

  // headline: the metric most runs plot per epoch (accuracy, rmse, ...).
  function headline(runs) {
    var count = {};
    runs.forEach(function (r) { var h = (r.state.info && r.state.info.headline) || 'accuracy'; count[h] = (count[h] || 0) + 1; });
    return Object.keys(count).sort(function (a, b) { return count[b] - count[a]; })[0] || 'accuracy';
  }

  // align joins per-run (x, y) series on the union of their x values:
  // uPlot's aligned data, null where a run has no point.
  function align(series) {
    var xs = {};
    series.forEach(function (s) { s.x.forEach(function (x) { xs[x] = true; }); });
    var x = Object.keys(xs).map(Number).sort(function (a, b) { return a - b; });
    var at = {};
    x.forEach(function (v, i) { at[v] = i; });
    var out = [x];
    series.forEach(function (s) {
      var y = new Array(x.length).fill(null);
      for (var i = 0; i < s.x.length; i++) y[at[s.x[i]]] = s.y[i] === undefined ? null : s.y[i];
      out.push(y);
    });
    return out;
  }

  function lossSeries(st, log) {
    var x = [], y = [];
    if (st.steps && st.steps.step && st.steps.step.length) {
      x = st.steps.step; y = st.steps.loss.slice();
    } else {
      (st.epochs || []).forEach(function (e) { x.push(e.steps); y.push(e.train ? e.train.loss : null); });
    }
    if (log) y = y.map(function (v) { return v > 0 ? v : null; });
    return { x: x, y: y };
  }

  function epochSeries(st, get) {
    var x = [], y = [];
    (st.epochs || []).forEach(function (e) { x.push(e.epoch); y.push(get(e)); });
    return { x: x, y: y };
  }

  var charts = [];
  function chart(id, xLabel, runs, data, opts) {
    var el = $(id);
    var o = {
      width: Math.max(200, el.clientWidth || 400), height: 260,
      scales: { x: { time: false }, y: opts && opts.log ? { distr: 3 } : {} },
      axes: [{ label: xLabel, size: 40 }, { size: 72, values: function (u, splits) { return splits.map(fmtTick); } }],
      legend: { live: true },
      cursor: { drag: { x: true, y: false } },
      series: [{ label: xLabel }].concat(runs.map(function (r, i) {
        return { label: r.name, stroke: color(i), width: opts && opts.points ? 2 : 1.25, spanGaps: true,
          points: { show: !!(opts && opts.points), size: 5 } };
      }))
    };
    el.textContent = '';
    var u = new uPlot(o, data, el);
    charts.push(u);
    probe.series += runs.length;
    return u;
  }

  var runs = [], lossLog = false;

  function drawLoss() {
    charts = charts.filter(function (u) { if (u.root.parentNode.id === 'c-loss') { u.destroy(); return false; } return true; });
    chart('c-loss', 'step', runs, align(runs.map(function (r) { return lossSeries(r.state, lossLog); })), { log: lossLog });
  }

  function draw() {
    var h = headline(runs);
    $('c-metric-caption').textContent = 'evaluation ' + h + ' per epoch';
    $('h-metric').textContent = 'eval ' + h;
    $('h-best').textContent = 'best ' + h;
    drawLoss();
    chart('c-metric', 'epoch', runs, align(runs.map(function (r) {
      return epochSeries(r.state, function (e) { return e.eval && e.eval[h] !== undefined ? e.eval[h] : null; });
    })), { points: true });
    chart('c-eval-loss', 'epoch', runs, align(runs.map(function (r) {
      return epochSeries(r.state, function (e) { return e.eval && e.eval.loss !== undefined ? e.eval.loss : null; });
    })), { points: true });
    chart('c-seconds', 'epoch', runs, align(runs.map(function (r) {
      return epochSeries(r.state, function (e) { return e.seconds; });
    })), { points: true });
    drawTable(h);
  }

  function drawTable(h) {
    var body = $('runs').tBodies[0];
    body.textContent = '';
    var lower = h === 'rmse' || h === 'loss' || h === 'mae';
    runs.forEach(function (r, i) {
      var st = r.state, E = st.epochs || [], last = E.length ? E[E.length - 1] : null;
      var best = null;
      E.forEach(function (e) {
        var v = e.eval ? e.eval[h] : undefined;
        if (v === undefined) return;
        if (best === null || (lower ? v < best : v > best)) best = v;
      });
      var tr = document.createElement('tr');
      var sw = document.createElement('td');
      var dot = document.createElement('span');
      dot.className = 'swatch';
      dot.style.background = color(i);
      sw.appendChild(dot);
      tr.appendChild(sw);
      var name = document.createElement('td'), a = document.createElement('a');
      a.href = r.page; a.textContent = r.name; a.title = (st.info && st.info.title) || r.name;
      name.appendChild(a); tr.appendChild(name);
      var status = st.status && st.status.error ? 'failed: ' + st.status.error : (st.status && st.status.done ? 'finished' : 'interrupted');
      [E.length, last ? fmtInt(last.steps) : '—', last && last.train ? fmt(last.train.loss) : '—',
       last && last.eval && last.eval[h] !== undefined ? fmt(last.eval[h]) : '—', best === null ? '—' : fmt(best),
       fmtDuration(st.status && st.status.t ? st.status.t : (last ? last.t : null)), status].forEach(function (v) {
        var td = document.createElement('td'); td.textContent = String(v); tr.appendChild(td);
      });
      body.appendChild(tr);
    });
    probe.runs = runs.length;
    document.body.dataset.runs = String(runs.length);
  }

  $('loss-log').addEventListener('change', function (e) { lossLog = e.target.checked; drawLoss(); });
  window.addEventListener('resize', function () {
    charts.forEach(function (u) { u.setSize({ width: Math.max(200, u.root.parentNode.clientWidth || 400), height: 260 }); });
  });

  fetch('api/runs' + (location.search || ''), { credentials: 'same-origin' }).then(function (r) {
    if (!r.ok) throw new Error('api/runs: ' + r.status);
    return r.json();
  }).then(function (v) {
    runs = v;
    $('title').textContent = runs.length + ' runs';
    document.title = runs.map(function (r) { return r.name; }).join(' · ') + ' · fathom';
    var st = $('status'); st.textContent = 'replay'; st.className = 'badge done';
    draw();
  }).catch(function (err) {
    probe.errors.push(String(err));
    var st = $('status'); st.textContent = String(err); st.className = 'badge error';
  });
})();
