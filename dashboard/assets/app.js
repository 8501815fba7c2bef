// The fathom dashboard page: reads the job's server-sent events (/events)
// and draws them with uPlot. Everything the page holds is bounded: step
// points are merged pairwise past MAX_POINTS, as the server does.
(function () {
  'use strict';

  var MAX_POINTS = 20000;
  var COLS = ['step', 'epoch', 'batch', 'batches', 'loss', 'lr', 'samples_per_sec', 'compute', 'comm', 'data', 't', 'n'];
  var LAST = { step: 1, epoch: 1, batch: 1, batches: 1, t: 1 }; // merged points keep the later value

  var st;
  function reset() {
    st = { info: null, steps: {}, epochs: [], workers: [], trials: [], parts: {}, partOrder: [], status: null };
    COLS.forEach(function (c) { st.steps[c] = []; });
  }
  reset();

  // What a test (or a curious person in the console) can read.
  var probe = window.fathomDashboard = { connected: false, epochs: 0, steps: 0, points: 0, trials: 0, trialsFinished: 0, partitions: 0, partitionsDone: 0, rows: 0, done: false, errors: [] };
  window.addEventListener('error', function (e) { probe.errors.push(String(e.message || e)); });
  // The longest task that kept the page from answering (ms), where the
  // browser tells (Chromium's Long Tasks API).
  probe.longestTaskMs = 0;
  if (window.PerformanceObserver && (PerformanceObserver.supportedEntryTypes || []).indexOf('longtask') >= 0) {
    new PerformanceObserver(function (list) {
      list.getEntries().forEach(function (e) { probe.longestTaskMs = Math.max(probe.longestTaskMs, e.duration); });
    }).observe({ entryTypes: ['longtask'] });
  }

  function $(id) { return document.getElementById(id); }
  var F = window.fathomFormat, fmt = F.fmt, fmtTick = F.tick, fmtInt = F.int, fmtDuration = F.duration;

  // ---- data ----

  function addSteps(cols) {
    var n = cols.step.length;
    for (var i = 0; i < n; i++) {
      COLS.forEach(function (c) { st.steps[c].push(cols[c] ? cols[c][i] : 0); });
    }
    if (st.steps.step.length > MAX_POINTS) compact();
  }

  // compact merges neighbouring step points pairwise: means weighted by
  // the steps each stands for, the later point's position.
  function compact() {
    var s = st.steps, len = s.step.length, out = {};
    COLS.forEach(function (c) { out[c] = []; });
    for (var i = 0; i < len; i += 2) {
      if (i + 1 >= len) { COLS.forEach(function (c) { out[c].push(s[c][i]); }); break; }
      var wa = s.n[i] || 1, wb = s.n[i + 1] || 1;
      COLS.forEach(function (c) {
        if (c === 'n') out.n.push(wa + wb);
        else if (LAST[c]) out[c].push(s[c][i + 1]);
        else {
          var a = s[c][i], b = s[c][i + 1];
          out[c].push(a === null || b === null ? (a === null ? b : a) : (a * wa + b * wb) / (wa + wb));
        }
      });
    }
    st.steps = out;
  }

  // ---- charts ----

  var charts = {};
  var palette = { train: '#2563eb', trainEpoch: '#0f766e', eval: '#dc2626', lr: '#7c3aed', sps: '#ea580c', compute: '#2563eb', comm: '#dc2626', data: '#ca8a04' };

  function chartWidth(el) { return Math.max(200, el.clientWidth || 400); }

  function makeChart(id, series, xLabel, opts) {
    var el = $(id);
    var o = {
      width: chartWidth(el), height: 240,
      scales: { x: { time: false } },
      axes: [{ label: xLabel, size: 40 }, { size: 72, values: function (u, splits) { return splits.map(fmtTick); } }],
      legend: { live: true },
      cursor: { drag: { x: true, y: false } },
      series: [{ label: xLabel }].concat(series)
    };
    if (opts) Object.keys(opts).forEach(function (k) { o[k] = opts[k]; });
    var empty = [[]].concat(series.map(function () { return []; }));
    return new uPlot(o, empty, el);
  }

  var lossLog = false;

  function makeLossChart() {
    return makeChart('c-loss', [
      { label: 'train (step)', stroke: palette.train, width: 1 },
      { label: 'train (epoch)', stroke: palette.trainEpoch, width: 2, spanGaps: true, points: { show: true, size: 5 } },
      { label: 'eval (epoch)', stroke: palette.eval, width: 2, spanGaps: true, points: { show: true, size: 5 } }
    ], 'step', { scales: { x: { time: false }, y: { distr: lossLog ? 3 : 1 } } });
  }

  function initCharts() {
    charts.loss = makeLossChart();
    $('loss-log').addEventListener('change', function (e) {
      lossLog = e.target.checked;
      probe.lossLog = lossLog;
      charts.loss.destroy();
      charts.loss = makeLossChart();
      relabel((st.info && st.info.eval_split) || 'eval');
      schedule();
    });
    charts.metric = makeChart('c-metric', [
      { label: 'train', stroke: palette.trainEpoch, width: 2, points: { show: true, size: 5 } },
      { label: 'eval', stroke: palette.eval, width: 2, points: { show: true, size: 5 } }
    ], 'epoch');
    charts.lr = makeChart('c-lr', [{ label: 'lr', stroke: palette.lr, width: 1.5 }], 'step');
    charts.sps = makeChart('c-sps', [{ label: 'samples/s', stroke: palette.sps, width: 1.5 }], 'step');
    charts.timing = makeChart('c-timing', [
      { label: 'compute', stroke: palette.compute, width: 1 },
      { label: 'communication', stroke: palette.comm, width: 1 },
      { label: 'data', stroke: palette.data, width: 1 }
    ], 'step');
    // The trials of a search: the metric of each by trial number, one
    // series of points per status (no lines).
    var dots = function (color) {
      return { stroke: color, fill: color, width: 0, paths: function () { return null; }, points: { show: true, size: 8, fill: color, stroke: color } };
    };
    charts.trials = makeChart('c-trials', [
      Object.assign({ label: 'done' }, dots(palette.train)),
      Object.assign({ label: 'stopped' }, dots(palette.sps))
    ], 'trial', { cursor: { drag: { x: true, y: false }, points: { show: false } } });
    window.addEventListener('resize', function () {
      Object.keys(charts).forEach(function (k) {
        var el = charts[k].root.parentNode;
        charts[k].setSize({ width: chartWidth(el), height: 240 });
      });
    });
  }

  // lossData joins the step points and the epoch points on one x axis
  // (uPlot's aligned data): nulls where a series has no point.
  function lossData() {
    var xs = st.steps.step, ls = st.steps.loss, E = st.epochs;
    var x = [], a = [], b = [], c = [];
    var i = 0, j = 0;
    while (i < xs.length || j < E.length) {
      var sx = i < xs.length ? xs[i] : Infinity, ex = j < E.length ? E[j].steps : Infinity;
      var e = null;
      if (sx <= ex) { x.push(sx); a.push(ls[i]); i++; } else { x.push(ex); a.push(null); }
      if (ex <= sx) { e = E[j]; j++; }
      b.push(e && e.train && e.train.loss !== undefined ? e.train.loss : null);
      c.push(e && e.eval && e.eval.loss !== undefined ? e.eval.loss : null);
    }
    if (lossLog) [a, b, c].forEach(positive); // a log scale has no room for 0
    return [x, a, b, c];
  }

  function positive(vs) {
    for (var i = 0; i < vs.length; i++) if (vs[i] !== null && !(vs[i] > 0)) vs[i] = null;
  }

  function headline() { return (st.info && st.info.headline) || 'accuracy'; }

  function metricData() {
    var h = headline(), x = [], a = [], b = [];
    st.epochs.forEach(function (e) {
      x.push(e.epoch);
      a.push(e.train && e.train[h] !== undefined ? e.train[h] : null);
      b.push(e.eval && e.eval[h] !== undefined ? e.eval[h] : null);
    });
    return [x, a, b];
  }

  var dirty = false;
  function schedule() {
    if (!dirty) { dirty = true; requestAnimationFrame(draw); }
  }

  function draw() {
    dirty = false;
    var s = st.steps;
    charts.loss.setData(lossData());
    charts.metric.setData(metricData());
    charts.lr.setData([s.step, s.lr]);
    charts.sps.setData([s.step, s.samples_per_sec]);
    var timed = s.compute.some(function (v) { return v > 0; }) || s.comm.some(function (v) { return v > 0; }) || s.data.some(function (v) { return v > 0; });
    var fig = $('f-timing');
    if (timed && fig.hidden) { // shown now: it can take its width
      fig.hidden = false;
      charts.timing.setSize({ width: chartWidth(charts.timing.root.parentNode), height: 240 });
    }
    if (timed) charts.timing.setData([s.step, ms(s.compute), ms(s.comm), ms(s.data)]);
    drawTiles();
    drawWorkers();
    drawTrials();
    drawParts();
    probe.epochs = st.epochs.length;
    probe.points = s.step.length;
    probe.steps = s.step.length ? s.step[s.step.length - 1] : 0;
    document.body.dataset.epochs = String(probe.epochs);
    document.body.dataset.points = String(probe.points);
  }

  function ms(seconds) { return seconds.map(function (v) { return v === null ? null : v * 1000; }); }

  function drawTiles() {
    var s = st.steps, n = s.step.length, info = st.info || {};
    var lastE = st.epochs.length ? st.epochs[st.epochs.length - 1] : null;
    var epoch = n ? s.epoch[n - 1] : (lastE ? lastE.epoch : null);
    $('t-epoch').textContent = epoch === null ? '—' : epoch + (info.epochs ? ' / ' + info.epochs : '');
    $('t-step').textContent = n ? fmtInt(s.step[n - 1]) : '—';
    $('t-loss').textContent = n ? fmt(s.loss[n - 1]) : (lastE ? fmt(lastE.train.loss) : '—');
    var h = headline(), split = info.eval_split || 'eval';
    $('t-metric-label').textContent = split + ' ' + h;
    $('c-metric-caption').textContent = h + ' per epoch';
    var m = lastE && lastE.eval ? lastE.eval[h] : (lastE ? lastE.train[h] : undefined);
    $('t-metric').textContent = m === undefined ? '—' : fmt(m);
    $('t-sps').textContent = n ? fmtInt(s.samples_per_sec[n - 1]) : '—';
    var elapsed = st.status && st.status.done ? st.status.t : (Date.now() - Date.parse(info.started || new Date().toISOString())) / 1000;
    $('t-elapsed').textContent = fmtDuration(elapsed);
    $('t-eta').textContent = st.status && st.status.done ? 'finished' : fmtDuration(eta());
    if (predicting()) drawPredictTiles(elapsed);
  }

  // predicting says the job is a batch prediction (`fathom predict ...
  // --out DIR`): its page shows partitions and rows rather than epochs
  // and losses.
  function predicting() { return (st.info && st.info.kind) === 'predict' || st.partOrder.length > 0; }

  // partCounts sums the partitions: done (skipped included), failed,
  // rows and errors.
  function partCounts() {
    var c = { done: 0, failed: 0, rows: 0, errors: 0 };
    st.partOrder.forEach(function (n) {
      var p = st.parts[n];
      if (p.status === 'done' || p.status === 'skipped') c.done++;
      if (p.status === 'failed') c.failed++;
      c.rows += p.rows; c.errors += p.errors;
    });
    return c;
  }

  // drawPredictTiles sets the tiles of a batch prediction: partitions
  // done of all, rows, errors, failed partitions, rows/s, and the ETA
  // from the partitions' pace so far.
  function drawPredictTiles(elapsed) {
    var info = st.info || {}, c = partCounts(), s = st.steps, n = s.step.length;
    $('t-epoch').textContent = c.done + (info.epochs ? ' / ' + info.epochs : '');
    $('t-step').textContent = fmtInt(c.rows);
    $('t-loss').textContent = fmtInt(c.errors);
    $('t-metric-label').textContent = 'failed partitions';
    $('t-metric').textContent = String(c.failed);
    $('t-sps').textContent = n ? fmtInt(s.samples_per_sec[n - 1]) : (elapsed > 0 ? fmtInt(c.rows / elapsed) : '—');
    var left = info.epochs ? info.epochs - c.done : 0;
    $('t-eta').textContent = st.status && st.status.done ? 'finished' :
      (c.done > 0 && left >= 0 ? fmtDuration(elapsed * left / c.done) : '—');
  }

  // drawParts fills the partitions table: those running first, then the
  // most recent, at most 500 rows.
  function drawParts() {
    var on = predicting();
    var sec = $('predict');
    if (sec.hidden === on) {
      sec.hidden = !on;
      ['c-loss', 'c-metric', 'c-lr'].forEach(function (id) { $(id).parentNode.hidden = on; });
      $('c-sps-caption').textContent = on ? 'rows/s' : 'samples/s';
      if (on) charts.sps.setSize({ width: chartWidth(charts.sps.root.parentNode), height: 240 });
    }
    if (!on) return;
    var names = st.partOrder.slice();
    var running = names.filter(function (nm) { return st.parts[nm].status === 'running'; });
    var rest = names.filter(function (nm) { return st.parts[nm].status !== 'running'; }).reverse();
    var body = $('parts').tBodies[0];
    body.textContent = '';
    running.concat(rest).slice(0, 500).forEach(function (nm) {
      var p = st.parts[nm], tr = document.createElement('tr');
      [p.name, p.rank, p.status + (p.error ? ': ' + p.error : ''), fmtInt(p.rows), fmtInt(p.errors),
       p.seconds > 0 ? fmtInt(p.rows / p.seconds) : '—', fmt(p.seconds, 2)].forEach(function (v) {
        var td = document.createElement('td'); td.textContent = String(v); tr.appendChild(td);
      });
      if (p.status === 'failed') tr.className = 'failed';
      body.appendChild(tr);
    });
    var c = partCounts(), info = st.info || {};
    $('parts-note').textContent = c.done + ' of ' + (info.epochs || names.length) + ' done' +
      (c.failed ? ' · ' + c.failed + ' failed' : '') + ' · ' + fmtInt(c.rows) + ' rows · ' + fmtInt(c.errors) + ' errors' +
      (names.length > 500 ? ' · showing 500 of ' + names.length : '');
    probe.partitions = names.length;
    probe.partitionsDone = c.done;
    probe.rows = c.rows;
    document.body.dataset.partitions = String(c.done);
  }

  // eta: the steps left at the run's mean time per step so far (which
  // includes evaluation).
  function eta() {
    var s = st.steps, n = s.step.length, info = st.info || {};
    var spe = info.steps_per_epoch || (n ? s.batches[n - 1] : 0);
    if (!n || !info.epochs || !spe) return null;
    var done = s.step[n - 1], t = s.t[n - 1];
    if (st.epochs.length) {
      var e = st.epochs[st.epochs.length - 1];
      if (e.steps >= done) { done = e.steps; t = e.t; }
    }
    if (done <= 0 || t <= 0) return null;
    return Math.max(0, info.epochs * spe - done) * t / done;
  }

  function drawWorkers() {
    var body = $('workers').tBodies[0];
    body.textContent = '';
    var now = Date.now();
    st.workers.forEach(function (w) {
      var tr = document.createElement('tr');
      [w.rank, w.host || '', w.epoch, fmtInt(w.step), fmtInt(w.samples_per_sec),
       fmtDuration((now - Date.parse(w.last_seen)) / 1000) + ' ago'].forEach(function (v) {
        var td = document.createElement('td'); td.textContent = String(v); tr.appendChild(td);
      });
      body.appendChild(tr);
    });
    var ws = st.info && st.info.world_size;
    $('workers-note').textContent = st.workers.length ? '' :
      (ws > 1 ? ws + ' workers; this page shows rank 0' : 'one process');
  }

  // drawTrials fills the trials table (a column per searched key) and the
  // scatter of the metric by trial; the best finished trial is marked.
  function drawTrials() {
    var ts = st.trials, info = st.info || {};
    var tune = info.kind === 'tune' || ts.length > 0;
    // A trial's status: queued, running, done, stopped (by ASHA), failed.
    var sec = $('tune');
    if (tune && sec.hidden) {
      sec.hidden = false;
      document.querySelector('.tiles').hidden = true;
      document.querySelector('.charts').hidden = true;
      charts.trials.setSize({ width: chartWidth(charts.trials.root.parentNode), height: 240 });
    }
    if (!tune) return;
    var metric = info.headline || 'metric', larger = info.mode !== 'min';
    $('c-trials-caption').textContent = metric + ' by trial';
    var keys = [];
    ts.forEach(function (t) { t.params.forEach(function (p) { if (keys.indexOf(p.key) < 0) keys.push(p.key); }); });
    var head = $('trials').tHead.rows[0];
    head.textContent = '';
    ['trial'].concat(keys, [metric, 'epochs', 'status', 'seconds', 'rank']).forEach(function (h) {
      var th = document.createElement('th'); th.textContent = h; head.appendChild(th);
    });
    var best = null, finished = 0;
    ts.forEach(function (t) {
      if (t.status === 'done' || t.status === 'stopped' || t.status === 'failed') finished++;
      if (t.status !== 'done' || t.metric === null) return;
      if (best === null || (larger ? t.metric > best.metric : t.metric < best.metric)) best = t;
    });
    var body = $('trials').tBodies[0];
    body.textContent = '';
    ts.forEach(function (t) {
      var tr = document.createElement('tr'), vals = {};
      t.params.forEach(function (p) { vals[p.key] = p.value; });
      var cells = [t.id].concat(keys.map(function (k) { return vals[k] === undefined ? '' : vals[k]; }),
        [t.metric === null ? '—' : fmt(t.metric), t.epochs || '', t.status + (t.error ? ': ' + t.error : ''),
         t.seconds ? t.seconds.toFixed(2) : '', t.rank >= 0 ? t.rank : '']);
      cells.forEach(function (v, i) {
        var td = document.createElement('td'); td.textContent = String(v);
        if (best === t && i === keys.length + 1) td.className = 'best';
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
    $('trials-note').textContent = (finished + ' of ' + (info.trials || ts.length) + ' finished') +
      (best ? ' · best: trial ' + best.id + ' (' + metric + ' ' + fmt(best.metric) + ')' : '');
    var x = [], done = [], stopped = [];
    ts.forEach(function (t) {
      x.push(t.id);
      done.push(t.status === 'done' ? t.metric : null);
      stopped.push(t.status === 'stopped' ? t.metric : null);
    });
    charts.trials.setData([x, done, stopped]);
    probe.trials = ts.length;
    probe.trialsFinished = finished;
    document.body.dataset.trials = String(finished);
  }

  // relabel names the evaluation series after the split ("test", "val").
  function relabel(split) {
    [['loss', 3, split + ' (epoch)'], ['metric', 2, split]].forEach(function (r) {
      var labels = charts[r[0]].root.querySelectorAll('.u-legend .u-series .u-label');
      if (labels[r[1]]) labels[r[1]].textContent = r[2];
    });
  }

  // kindLabels names the tiles after the kind of job: a classic-ML fit
  // ("ml") counts solver iterations of its pipeline's stages, and its loss
  // is the solver's objective.
  function kindLabels(kind) {
    var labels = { ml: ['stage', 'iteration', 'objective', 'samples/s'], predict: ['partitions', 'rows', 'errors', 'rows/s'] }[kind] ||
      ['epoch', 'step', 'train loss', 'samples/s'];
    ['t-epoch', 't-step', 't-loss', 't-sps'].forEach(function (id, i) {
      $(id).previousElementSibling.textContent = labels[i];
    });
  }

  function drawInfo() {
    var info = st.info || {};
    kindLabels(info.kind);
    relabel(info.eval_split || 'eval');
    $('title').textContent = info.title || 'dashboard';
    document.title = (info.title ? info.title + ' · ' : '') + 'fathom';
    $('config').textContent = info.config || '—';
    $('model').textContent = info.model || '—';
    var m = info.machine || {};
    var rows = [['host', m.hostname], ['CPU', m.cpu], ['CPUs', m.cpus], ['GOMAXPROCS', m.gomaxprocs],
      ['OS / arch', (m.os || '') + ' / ' + (m.arch || '')], ['Go', m.go_version], ['task', info.task],
      ['parameters', info.parameters ? fmtInt(info.parameters) : ''], ['training rows', info.train_rows ? fmtInt(info.train_rows) : ''],
      ['workers', info.world_size || 1], ['started', info.started ? new Date(info.started).toLocaleString() : '']];
    var body = $('machine').tBodies[0];
    body.textContent = '';
    rows.forEach(function (r) {
      if (r[1] === undefined || r[1] === '' || r[1] === null) return;
      var tr = document.createElement('tr'), th = document.createElement('th'), td = document.createElement('td');
      th.textContent = r[0]; td.textContent = String(r[1]);
      tr.appendChild(th); tr.appendChild(td); body.appendChild(tr);
    });
  }

  function setStatus(text, cls) {
    var el = $('status');
    el.textContent = text;
    el.className = 'badge ' + (cls || '');
  }

  // ---- events ----

  function parse(e) {
    try { return JSON.parse(e.data); } catch (err) { probe.errors.push('bad event ' + e.type + ': ' + err); return null; }
  }

  function connect() {
    var src = new EventSource('events' + (location.search || ''));
    src.onopen = function () { probe.connected = true; if (!st.status) setStatus('running', 'running'); };
    src.onerror = function () {
      probe.connected = false;
      if (st.status && st.status.done) { src.close(); return; }
      setStatus('disconnected', '');
    };
    src.addEventListener('reset', function () { reset(); schedule(); });
    src.addEventListener('info', function (e) { var v = parse(e); if (v) { st.info = v; drawInfo(); schedule(); } });
    src.addEventListener('steps', function (e) { var v = parse(e); if (v) { addSteps(v); schedule(); } });
    src.addEventListener('epoch', function (e) { var v = parse(e); if (v) { st.epochs.push(v); schedule(); } });
    src.addEventListener('workers', function (e) { var v = parse(e); if (v) { st.workers = v; schedule(); } });
    src.addEventListener('trials', function (e) { var v = parse(e); if (v) { st.trials = v; schedule(); } });
    src.addEventListener('partitions', function (e) {
      var v = parse(e);
      if (!v) return;
      v.forEach(function (p) {
        if (!st.parts[p.name]) st.partOrder.push(p.name);
        st.parts[p.name] = p;
      });
      schedule();
    });
    src.addEventListener('done', function (e) {
      var v = parse(e);
      if (!v) return;
      st.status = v;
      probe.done = true;
      if (v.error) setStatus('failed: ' + v.error, 'error'); else setStatus('finished', 'done');
      schedule();
    });
  }

  initCharts();
  drawInfo();
  connect();
  setInterval(function () { if (!(st.status && st.status.done)) drawTiles(); }, 1000);
})();
