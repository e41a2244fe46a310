// Opens a ridge HTML report in headless Chromium (through chromedriver/WebDriver on loopback) and checks it as a
// person would: it loads with no console errors, every expected section is there, the layer table sorts, hovering a
// chart point shows its numbers, and a screenshot is not blank.
//
//   node browser_check.mjs --html report.html [--sections summary,layers,...] [--screenshot out.png]
//   node browser_check.mjs --ridge path/to/ridge --model resnet18 --out DIR [--sections ...]   (generates first,
//        with --json next to it: the headline's numbers must equal the JSON's and sit on the first screen)
//   [--ridge-args "-d a100 -d h100 --train"] [--rooflines a100-sxm4-40gb,h100-sxm,cpu] [--titles resnet18,training]
//
// Exit codes: 0 all checks passed, 1 a check failed, 77 skipped (chromium or chromedriver not installed).
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';

const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run', '--window-size=1400,1000'];

function parseArgs(argv) {
  const args = { sections: 'summary,layers' };
  for (let i = 0; i < argv.length; i += 2) args[argv[i].replace(/^--/, '')] = argv[i + 1];
  return args;
}

function which(name) {
  for (const dir of (process.env.PATH || '').split(':')) {
    const p = path.join(dir, name);
    try { fs.accessSync(p, fs.constants.X_OK); return p; } catch { /* next */ }
  }
  return null;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => { const { port } = srv.address(); srv.close(() => resolve(port)); });
    srv.on('error', reject);
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Decodes an 8-bit RGB/RGBA PNG (what Chromium's screenshots are) into { width, height, channels, pixels }.
function decodePng(buf) {
  let pos = 8, width = 0, height = 0, colourType = 0;
  const idat = [];
  while (pos < buf.length) {
    const len = buf.readUInt32BE(pos), type = buf.toString('latin1', pos + 4, pos + 8);
    const data = buf.subarray(pos + 8, pos + 8 + len);
    if (type === 'IHDR') { width = data.readUInt32BE(0); height = data.readUInt32BE(4); colourType = data[9]; if (data[8] !== 8) throw new Error('bit depth ' + data[8]); }
    if (type === 'IDAT') idat.push(data);
    pos += 12 + len;
  }
  const channels = colourType === 6 ? 4 : colourType === 2 ? 3 : 0;
  if (!channels) throw new Error('PNG colour type ' + colourType);
  const raw = zlib.inflateSync(Buffer.concat(idat)), stride = width * channels;
  const pixels = Buffer.alloc(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)], row = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? pixels[y * stride + x - channels] : 0;
      const b = y > 0 ? pixels[(y - 1) * stride + x] : 0;
      const c = x >= channels && y > 0 ? pixels[(y - 1) * stride + x - channels] : 0;
      let v = row[x];
      if (filter === 1) v += a;
      else if (filter === 2) v += b;
      else if (filter === 3) v += (a + b) >> 1;
      else if (filter === 4) { const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c); v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c; }
      pixels[y * stride + x] = v & 255;
    }
  }
  return { width, height, channels, pixels };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const chromium = process.env.CHROMIUM || which('chromium') || which('chromium-browser');
  const driverPath = process.env.CHROMEDRIVER || which('chromedriver');
  if (!chromium || !driverPath) {
    console.log('SKIP: headless browser check needs chromium and chromedriver (scripts/install-deps.sh --with-test-deps)');
    return 77;
  }
  let html = args.html;
  if (args.ridge) {
    fs.mkdirSync(args.out, { recursive: true });
    html = path.join(args.out, 'report.html');
    const extra = args['ridge-args'] ? args['ridge-args'].split(' ') : [];
    args.json = path.join(args.out, 'report.json');
    const run = spawnSync(args.ridge, ['report', args.model, ...extra, '-o', html, '--json', args.json], { encoding: 'utf8' });
    if (run.status !== 0) { console.log(`FAIL: ridge report ${args.model} exited ${run.status}: ${run.stderr.trim()}`); return 1; }
    console.log(`generated ${html}: ${run.stdout.trim()}`);
  }
  if (!html || !fs.existsSync(html)) { console.log(`FAIL: no report at ${html}`); return 1; }

  const failures = [];
  const check = (ok, what) => { console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`); if (!ok) failures.push(what); };
  const port = await freePort();
  const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ridge-chromium-'));
  const driver = spawn(driverPath, [`--port=${port}`], { stdio: 'ignore' });
  const wd = async (method, route, body) => {
    const r = await fetch(`http://127.0.0.1:${port}${route}`, { method, headers: { 'Content-Type': 'application/json' }, body: body ? JSON.stringify(body) : undefined });
    const j = await r.json();
    if (j.value && j.value.error) throw new Error(`${route}: ${j.value.error}: ${j.value.message}`);
    return j.value;
  };
  let session = null;
  try {
    for (let i = 0; i < 100; i++) {
      try { if ((await wd('GET', '/status')).ready) break; } catch { /* not up yet */ }
      await sleep(100);
    }
    session = (await wd('POST', '/session', { capabilities: { alwaysMatch: {
      'goog:chromeOptions': { binary: chromium, args: [...CHROMIUM_FLAGS, `--user-data-dir=${userDir}`] },
      'goog:loggingPrefs': { browser: 'ALL' } } } })).sessionId;
    const s = `/session/${session}`;
    const exec = (script) => wd('POST', `${s}/execute/sync`, { script, args: [] });

    await wd('POST', `${s}/url`, { url: 'file://' + path.resolve(html) });
    const loadMs = await exec('const t = performance.getEntriesByType("navigation")[0]; return t ? t.loadEventEnd : -1;');
    console.log(`loaded in ${Math.round(loadMs)} ms (informational)`);

    const page = await exec(`return {
      sections: Array.from(document.querySelectorAll('section')).map(s => s.id),
      rows: document.querySelectorAll('#layers tbody tr').length,
      charts: document.querySelectorAll('svg.chart').length,
      points: document.querySelectorAll('svg .pt').length };`);
    console.log(`page: ${page.sections.length} sections, ${page.rows} layer rows, ${page.charts} charts, ${page.points} points`);
    for (const id of args.sections.split(',')) check(page.sections.includes(id), `section #${id} present`);
    if (args['min-rows']) check(page.rows >= Number(args['min-rows']), `layer table has >= ${args['min-rows']} rows`);
    if (args['min-charts']) check(page.charts >= Number(args['min-charts']), `>= ${args['min-charts']} charts`);

    if (page.rows > 1) {  // sort by the first numeric column, descending
      const sorted = await exec(`
        const table = document.querySelector('#layers table.sortable');
        const row = table.tBodies[0].rows[0];
        const col = Array.from(row.cells).findIndex(c => c.hasAttribute('data-v'));
        if (col < 0) return null;
        table.tHead.rows[0].cells[col].click();
        const v = Array.from(table.tBodies[0].rows).map(r => Number(r.cells[col].getAttribute('data-v'))).filter(x => !isNaN(x));
        return v.every((x, i) => i === 0 || v[i - 1] >= x);`);
      check(sorted !== false, 'clicking a column header sorts the layer table');
    }
    if (page.points > 0) {
      const tip = await exec(`
        const pt = document.querySelector('svg .pt');
        pt.dispatchEvent(new MouseEvent('mouseover', { bubbles: true, clientX: 50, clientY: 50 }));
        const tip = document.getElementById('tip');
        return { shown: !tip.hidden, text: tip.textContent, row: pt.getAttribute('data-row'),
                 lit: document.querySelectorAll('#layers tr.hl').length };`);
      check(tip.shown && tip.text.length > 0, `hovering a point shows its numbers ("${tip.text.split('\n')[0]}")`);
      if (tip.row !== null && page.rows > 0) check(tip.lit === 1, 'hovering a point highlights its layer row');
    }

    if (args.json) {  // what the page shows equals the report's JSON
      const doc = JSON.parse(fs.readFileSync(args.json, 'utf8'));
      const shown = await exec(`
        const t = document.querySelector('#headline table[data-key="headline"]');
        if (!t) return null;
        const keys = Array.from(t.tHead.rows[0].cells).map(c => c.getAttribute('title'));
        return Array.from(t.tBodies[0].rows).map(r => {
          const o = {};
          Array.from(r.cells).forEach((c, i) => { o[keys[i]] = { v: c.getAttribute('data-v'), text: c.textContent }; });
          return o; });`);
      check(shown !== null && shown.length === doc.headline.length,
        `headline shows one row per run of the JSON (${shown ? shown.length : 'none'} vs ${doc.headline.length})`);
      let same = 0, differ = [];
      (shown || []).forEach((row, i) => {
        for (const key of ['time_s', 'rate_per_s', 'ttft_s', 'per_token_s']) {
          if (!(key in doc.headline[i])) continue;
          const want = doc.headline[i][key], got = row[key] ? Number(row[key].v) : NaN;
          if (got === want && row[key].text.trim() !== '') same++; else differ.push(`${doc.headline[i].run}.${key}: page ${got}, JSON ${want}`);
        }
        if (row.run && row.run.text !== doc.headline[i].run) differ.push(`row ${i}: page ${row.run.text}, JSON ${doc.headline[i].run}`);
      });
      check(differ.length === 0 && same > 0, `headline numbers equal the JSON's (${same} equal${differ.length ? '; ' + differ.join('; ') : ''})`);
      const firstScreen = await exec(`
        const h = document.getElementById('headline').getBoundingClientRect();
        const t = document.querySelector('#headline table[data-key="headline"]').getBoundingClientRect();
        const charts = Array.from(document.querySelectorAll('#headline svg.chart')).map(c => c.getBoundingClientRect().bottom);
        return { top: h.top, table: t.bottom, charts: charts, height: window.innerHeight };`);
      check(firstScreen.top < firstScreen.height && firstScreen.table <= firstScreen.height &&
            firstScreen.charts.length >= 2 && firstScreen.charts.every(b => b <= firstScreen.height),
        `the headline (times and its ${firstScreen.charts.length} charts) is on the first screen (bottom ${Math.round(Math.max(firstScreen.table, ...firstScreen.charts))} px of ${firstScreen.height})`);
    }
    if (args.rooflines) {  // one roofline per device; estimates hollow; measurements only on the CPU's chart
      const roof = await exec(`
        return Array.from(document.querySelectorAll('#roofline svg.chart > g')).map(g => ({
          title: (g.querySelector('text[font-weight="bold"]') || {}).textContent || '',
          hollow: g.querySelectorAll('.pt[data-mark="hollow"]').length,
          filled: g.querySelectorAll('.pt[data-mark="filled"]').length }));`);
      const devices = args.rooflines.split(',');
      check(roof.length === devices.length, `one roofline per device (${roof.length} charts for ${devices.join(', ')})`);
      devices.forEach((d, i) => {
        const chart = roof[i] || { title: '', hollow: 0, filled: 0 };
        const cpu = d === 'cpu';
        check(chart.title.startsWith(cpu ? 'this CPU' : d) && (cpu ? chart.filled > 0 : chart.hollow > 0 && chart.filled === 0),
          `roofline ${i + 1} is ${d}'s ("${chart.title}": ${chart.hollow} hollow estimated, ${chart.filled} filled measured points)`);
      });
    }
    if (args.titles) {  // every chart title names the scenario (the parts given, comma-separated)
      const titles = await exec(`return Array.from(document.querySelectorAll('svg.chart > g')).map(g =>
        (g.querySelector('text[font-weight="bold"]') || {}).textContent || '');`);
      const parts = args.titles.split(',');
      const missing = titles.filter(t => !parts.every(p => t.includes(p)));
      check(titles.length > 0 && missing.length === 0,
        `all ${titles.length} chart titles name ${parts.join(', ')}${missing.length ? ' (not: ' + missing.join(' | ') + ')' : ''}`);
    }

    const shot = Buffer.from(await wd('GET', `${s}/screenshot`), 'base64');
    if (args.screenshot) fs.writeFileSync(args.screenshot, shot);
    const img = decodePng(shot);
    let inked = 0;
    const colours = new Set();
    for (let i = 0; i < img.width * img.height; i++) {
      const o = i * img.channels, r = img.pixels[o], g = img.pixels[o + 1], b = img.pixels[o + 2];
      if (r < 235 || g < 235 || b < 235) inked++;
      if (i % 7 === 0) colours.add((r >> 4) << 8 | (g >> 4) << 4 | (b >> 4));
    }
    check(inked / (img.width * img.height) > 0.01 && colours.size >= 4,
      `screenshot ${img.width}x${img.height} is not blank (${(100 * inked / (img.width * img.height)).toFixed(1)}% inked, ${colours.size} colours)`);

    const logs = await wd('POST', `${s}/se/log`, { type: 'browser' });
    const errors = logs.filter((l) => l.level === 'SEVERE');
    for (const e of errors) console.log(`console: ${e.message}`);
    check(errors.length === 0, 'no console errors');
  } catch (e) {
    check(false, `browser session: ${e.message}`);
  } finally {
    if (session) await wd('DELETE', `/session/${session}`).catch(() => {});
    driver.kill();
    fs.rmSync(userDir, { recursive: true, force: true });
  }
  console.log(`browser check: ${failures.length === 0 ? 'passed' : failures.length + ' failed'}`);
  return failures.length === 0 ? 0 : 1;
}

process.exitCode = await main();
