// Internal to the HTML report: the page's inline style sheet and script (kept small so that a 600-layer
// report opens at once: sorting and hover only, no libraries).
#pragma once

namespace ridge::chart::detail {

inline constexpr const char* kReportCss = R"css(
:root { --ink: #222; --muted: #666; --rule: #ddd; --hl: #fff3c4; --accent: #0072B2; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 "DejaVu Sans", Helvetica, Arial, sans-serif; color: var(--ink); background: #fafafa; }
header { background: white; border-bottom: 1px solid var(--rule); padding: 16px 24px 8px; }
header h1 { margin: 0 0 4px; font-size: 22px; }
header p { margin: 0; color: var(--muted); }
nav { margin-top: 8px; }
nav a { margin-right: 14px; color: var(--accent); text-decoration: none; }
main { padding: 8px 24px 40px; max-width: 1400px; }
section { background: white; border: 1px solid var(--rule); border-radius: 6px; margin: 16px 0; padding: 4px 18px 14px; }
section h2 { font-size: 18px; border-bottom: 1px solid var(--rule); padding-bottom: 6px; }
section h3 { font-size: 15px; margin: 14px 0 6px; }
.scroll { overflow: auto; max-height: 70vh; border: 1px solid var(--rule); }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { padding: 3px 10px; border-bottom: 1px solid #eee; white-space: nowrap; }
td.num { text-align: right; }
thead th { position: sticky; top: 0; background: #f2f2f2; text-align: left; cursor: pointer; user-select: none; }
thead th.sorted-asc::after { content: " \25B2"; font-size: 10px; }
thead th.sorted-desc::after { content: " \25BC"; font-size: 10px; }
tbody tr:nth-child(even) { background: #fbfbfb; }
tbody tr.hl, tbody tr:hover { background: var(--hl); }
tfoot td { font-weight: bold; border-top: 2px solid #999; }
table.fields th { text-align: left; cursor: default; background: none; position: static; font-weight: normal; color: var(--muted); }
figure { margin: 12px 0; overflow-x: auto; }
figure svg { max-width: 100%; height: auto; }
svg .pt:hover, svg .bar:hover, svg .pt.hl { stroke: #000; stroke-width: 2; }
.note { color: var(--muted); }
section.headline { border-color: #9bb; }
section.headline h2 { margin: 10px 0 6px; }
.headline .blocks { display: flex; flex-wrap: wrap; gap: 10px 28px; align-items: flex-start; }
.headline .block h3 { margin-top: 4px; }
.headline .scroll { max-height: none; overflow: visible; }
.headline table[data-key="headline"] td { font-size: 16px; padding: 4px 12px; }
.headline table[data-key="headline"] td:nth-child(3), .headline table[data-key="headline"] td:nth-child(4) { font-weight: bold; }
.chart-row { display: flex; flex-wrap: wrap; gap: 0 16px; align-items: flex-start; }
.chart-row figure { margin: 6px 0; flex: 1 1 520px; max-width: calc(50% - 8px); }
details.module { border-bottom: 1px solid #eee; }
details.module summary { cursor: pointer; padding: 3px 4px; font-variant-numeric: tabular-nums; }
details.module summary:hover { background: var(--hl); }
details.module summary .mod { display: inline-block; min-width: 160px; font-weight: bold; }
details.module summary .n { display: inline-block; min-width: 80px; color: var(--muted); }
details.module summary .tot { display: inline-block; min-width: 150px; margin-right: 10px; }
details.module summary .tot em { font-style: normal; color: var(--muted); font-size: 12px; }
details.module .scroll { margin: 2px 0 8px 18px; max-height: 50vh; }
#tip { position: fixed; pointer-events: none; background: rgba(20,20,20,.92); color: white; padding: 6px 9px;
       border-radius: 4px; font-size: 12px; white-space: pre-line; max-width: 420px; z-index: 10; }
)css";

inline constexpr const char* kReportJs = R"js(
(function () {
  'use strict';
  // Sortable tables: click a header; numbers sort by their exact value in data-v, text alphabetically.
  document.querySelectorAll('table.sortable').forEach(function (table) {
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, col) {
      th.addEventListener('click', function () {
        var desc = !th.classList.contains('sorted-desc');
        Array.prototype.forEach.call(heads, function (h) { h.classList.remove('sorted-asc', 'sorted-desc'); });
        th.classList.add(desc ? 'sorted-desc' : 'sorted-asc');
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        var key = function (r) {
          var c = r.cells[col], v = c.getAttribute('data-v');
          return v === null ? c.textContent : (v === '' ? NaN : Number(v));
        };
        var keyed = rows.map(function (r) { return [key(r), r]; });
        keyed.sort(function (a, b) {
          var x = a[0], y = b[0];
          if (typeof x === 'number' && isNaN(x)) return 1;
          if (typeof y === 'number' && isNaN(y)) return -1;
          var c = typeof x === 'number' ? x - y : String(x).localeCompare(String(y));
          return desc ? -c : c;
        });
        var frag = document.createDocumentFragment();
        keyed.forEach(function (k) { frag.appendChild(k[1]); });
        body.appendChild(frag);
      });
    });
  });
  // Hover: a chart element's <title> becomes a tooltip at once, and its layer row is highlighted.
  var tip = document.getElementById('tip');
  var lit = null;
  document.addEventListener('mouseover', function (e) {
    var el = e.target.closest ? e.target.closest('.pt, .bar, .marker') : null;
    if (lit) { lit.classList.remove('hl'); lit = null; }
    if (!el) { tip.hidden = true; return; }
    var t = el.querySelector('title');
    if (t) { el.setAttribute('data-tip', t.textContent); t.remove(); }
    tip.textContent = el.getAttribute('data-tip') || '';
    tip.hidden = false;
    var row = el.getAttribute('data-row');
    if (row !== null) {
      lit = document.querySelector('#layers tbody tr[data-row="' + row + '"]');
      if (lit) lit.classList.add('hl');
    }
  });
  document.addEventListener('mousemove', function (e) {
    if (tip.hidden) return;
    tip.style.left = Math.min(e.clientX + 14, window.innerWidth - 430) + 'px';
    tip.style.top = (e.clientY + 14) + 'px';
  });
})();
)js";

}  // namespace ridge::chart::detail
