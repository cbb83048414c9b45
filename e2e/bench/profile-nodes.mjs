// Diagnostic (not a benchmark): a CPU profile of the page while a cluster of N nodes
// starts (from all nodes drawn until the virtual clock passes --until ms), printing the
// functions with the most self and inclusive time, and inclusive inside busy spans of 50 ms
// or more (the long tasks).
import { nodesLink, numberArg, withPage } from './lib.mjs';

const nodes = numberArg('--nodes', 5000);
const until = numberArg('--until', 1000);
const clockMs = (text) => text.split(':').reduce((acc, part) => acc * 60 + Number(part), 0) * 1000;

await withPage(async (browser, url) => {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  await page.goto(`${url}${nodesLink(nodes)}`);
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid=node]').length === n, nodes, {
    timeout: 300_000,
  });
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 1000 });
  await page.evaluate(() => {
    window.__lt = [];
    new PerformanceObserver((l) => {
      for (const e of l.getEntries()) window.__lt.push([e.startTime, e.duration]);
    }).observe({ type: 'longtask' });
  });
  await cdp.send('Profiler.start');
  const t0 = Date.now();
  await page.getByTestId('speed-8').click();
  const clockText = () => page.evaluate(() => document.querySelector('[data-testid=clock-value]').textContent);
  while (clockMs(await clockText()) < until && Date.now() - t0 < 600_000) await page.waitForTimeout(250);
  const wall = (Date.now() - t0) / 1000;
  const { profile } = await cdp.send('Profiler.stop');
  const lt = await page.evaluate(() => window.__lt);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  // Adds `dt` to every function on the sample's stack, once each.
  const addInclusive = (into, id, dt) => {
    const seen = new Set();
    for (let p = id; p !== undefined; p = parent.get(p)) {
      const f = byId.get(p).callFrame.functionName || '(anon)';
      if (seen.has(f)) continue;
      seen.add(f);
      into.set(f, (into.get(f) ?? 0) + dt);
    }
  };
  const self = new Map();
  const inclusive = new Map();
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = (profile.timeDeltas[i] ?? 0) / 1000;
    const id = profile.samples[i];
    const n = byId.get(id);
    const name = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').pop()}`;
    self.set(name, (self.get(name) ?? 0) + dt);
    addInclusive(inclusive, id, dt);
  }
  // Busy spans (samples with no idle between them) of 50 ms or more stand for the long
  // tasks: what they spent their time in, inclusive.
  const inLong = new Map();
  let span = [];
  let spanMs = 0;
  const flush = () => {
    if (spanMs >= 50) {
      for (const [id, dt] of span) addInclusive(inLong, id, dt);
    }
    span = [];
    spanMs = 0;
  };
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = (profile.timeDeltas[i] ?? 0) / 1000;
    if (byId.get(profile.samples[i]).callFrame.functionName === '(idle)') flush();
    else {
      span.push([profile.samples[i], dt]);
      spanMs += dt;
    }
  }
  flush();
  console.log('wall', wall, 's; long tasks', lt.length, 'sum', Math.round(lt.reduce((a, [, d]) => a + d, 0)), 'ms');
  console.log('--- self');
  for (const [name, ms] of [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 45)) {
    console.log(ms.toFixed(0).padStart(8), name);
  }
  console.log('--- inclusive');
  for (const [name, ms] of [...inclusive.entries()].sort((a, b) => b[1] - a[1]).slice(0, 70)) {
    console.log(ms.toFixed(0).padStart(8), name);
  }
  console.log('--- inclusive, inside busy spans of 50 ms or more');
  for (const [name, ms] of [...inLong.entries()].sort((a, b) => b[1] - a[1]).slice(0, 60)) {
    console.log(ms.toFixed(0).padStart(8), name);
  }
});
