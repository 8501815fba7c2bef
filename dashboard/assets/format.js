// Number and duration formats shared by the dashboard's pages (the live
// page, app.js, and the runs page, compare.js).
(function () {
  'use strict';

  function fmt(v, digits) {
    if (v === null || v === undefined || !isFinite(v)) return '—';
    var a = Math.abs(v);
    if (a !== 0 && (a < 1e-3 || a >= 1e6)) return v.toExponential(2);
    return v.toFixed(digits === undefined ? 4 : digits);
  }
  // fmtTick labels an axis tick: few digits, exponents for the very small
  // and very large.
  function fmtTick(v) {
    if (v === null || v === undefined) return '';
    var a = Math.abs(v);
    if (a === 0) return '0';
    if (a < 1e-3 || a >= 1e12) return v.toExponential(1);
    if (a >= 1e9) return parseFloat((v / 1e9).toPrecision(3)) + 'G';
    if (a >= 1e6) return parseFloat((v / 1e6).toPrecision(3)) + 'M';
    if (a >= 1e4) return parseFloat((v / 1e3).toPrecision(3)) + 'k';
    return String(parseFloat(v.toPrecision(4)));
  }
  function fmtInt(v) { return v === null || v === undefined ? '—' : Math.round(v).toLocaleString('en-US'); }
  // fmtDuration writes seconds as "1h 2m", "3m 4s" or "5s"; precise
  // writes those under ten seconds with two decimals.
  function fmtDuration(s, precise) {
    if (s === null || s === undefined || !isFinite(s) || s < 0) return '—';
    if (precise && s < 10) return s.toFixed(2) + 's';
    s = Math.round(s);
    var h = Math.floor(s / 3600), m = Math.floor(s % 3600 / 60), r = s % 60;
    if (h > 0) return h + 'h ' + m + 'm';
    if (m > 0) return m + 'm ' + r + 's';
    return r + 's';
  }

  window.fathomFormat = { fmt: fmt, tick: fmtTick, int: fmtInt, duration: fmtDuration };
})();
