import * as require_fs from "node:fs";
// Diagnostic (not a benchmark): a CPU profile of the page while the hundred-nodes example
// scales, printing the functions with the most self time inside tasks over 50 ms.
import { withPage } from './lib.mjs';
const replicas = Number(process.argv[2] ?? 1000);
await withPage(async (browser, url) => {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  await page.goto(url);
  await page.getByTestId('cluster-diagram').waitFor();
  await page.getByTestId('examples').selectOption('hundred-nodes');
  await page.getByTestId('speed-8').click();
  while (Number(await page.getByTestId('cluster-diagram').getAttribute('data-user-ready')) < 200) await page.waitForTimeout(250);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 500 });
  await page.evaluate(() => {
    window.__lt = [];
    new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__lt.push([e.startTime, e.duration]); }).observe({ type: 'longtask' });
  });
  await cdp.send('Profiler.start');
  const input = page.getByTestId('terminal-input');
  await input.fill(`kubectl scale deployment web --replicas=${replicas}`);
  await input.press('Enter');
  const t0 = Date.now();
  while (Number(await page.getByTestId('cluster-diagram').getAttribute('data-user-ready')) < replicas && Date.now() - t0 < 90_000) await page.waitForTimeout(500);
  const { profile } = await cdp.send('Profiler.stop');
  const lt = await page.evaluate(() => window.__lt);
  require_fs.writeFileSync("/tmp/prof/profile.json", JSON.stringify({profile, lt}));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  const dt = profile.timeDeltas;
  for (let i = 0; i < profile.samples.length; i++) {
    const n = byId.get(profile.samples[i]);
    const name = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').pop()}`;
    self.set(name, (self.get(name) ?? 0) + (dt[i] ?? 0) / 1000);
  }
  const top = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 40);
  for (const [name, ms] of top) console.log(ms.toFixed(0).padStart(8), name);
  console.log('ready', await page.getByTestId('cluster-diagram').getAttribute('data-user-ready'), 'in', (Date.now() - t0) / 1000, 's');
});
