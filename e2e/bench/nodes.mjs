// Benchmark: the page opening a cluster of N worker nodes (no workload), in headless
// Debian Chromium: a share link of a scenario with `nodes: [{namePrefix: node-, count: N}]`,
// opened as a learner opens a link, then played at 8×.
//
//   node bench/nodes.mjs [--nodes N] [--seconds S]     prints one JSON object on stdout
//
// It reports the wall time until the diagram draws every node, the wall time until the
// virtual clock passes 1 s (the cluster's start: N kubelets registering, the kube-proxy
// and CNI DaemonSets' pods on every node), then over S seconds of wall time at 8×: long
// tasks, the frames' p95 and how many were late, the virtual time reached, the page's
// element count and the heap in use.
import { nodesLink, numberArg, percentile, round, withPage } from './lib.mjs';

const nodes = numberArg('--nodes', 1000);
const seconds = numberArg('--seconds', 30);


function watchTasksAndFrames() {
  window.__bench = { tasks: [], frames: [] };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__bench.tasks.push(e.duration);
  }).observe({ type: 'longtask', buffered: false });
  let last = 0;
  const frame = (t) => {
    if (last) window.__bench.frames.push(t - last);
    last = t;
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
}

/** The virtual clock in ms, from its `mm:ss.mmm` (or `h:mm:ss.mmm`) text. */
const clockMs = (text) => text.split(':').reduce((acc, part) => acc * 60 + Number(part), 0) * 1000;

await withPage(async (browser, url) => {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  await page.addInitScript(watchTasksAndFrames);
  const start = Date.now();
  await page.goto(`${url}${nodesLink(nodes)}`);
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid=node]').length === n, nodes, {
    timeout: 300_000,
  });
  const drawn = Date.now() - start;
  // Read with one querySelector, not a Playwright locator: a locator's test-id query
  // walks every element, which at 5,000 nodes (40,000 elements) polled five times a
  // second took an eighth of the page's main thread.
  const clock = {
    textContent: () => page.evaluate(() => document.querySelector('[data-testid=clock-value]').textContent),
  };
  while (clockMs(await clock.textContent()) < 1000) {
    if (Date.now() - start > 600_000) throw new Error('the clock did not reach 1 s in 10 minutes');
    await page.waitForTimeout(200);
  }
  const booted = Date.now() - start;
  await page.getByTestId('speed-8').click();
  await page.evaluate(() => {
    window.__bench.tasks = [];
    window.__bench.frames = [];
  });
  const from = clockMs(await clock.textContent());
  await page.waitForTimeout(seconds * 1000);
  const r = await page.evaluate(() => ({
    tasks: window.__bench.tasks,
    frames: window.__bench.frames,
    elements: document.getElementsByTagName('*').length,
    heap_mib: Number(document.querySelector('[data-testid=memory]')?.getAttribute('data-mib')),
  }));
  const to = clockMs(await clock.textContent());
  console.log(
    JSON.stringify({
      nodes,
      all_nodes_drawn_s: round(drawn / 1000),
      clock_past_1s_s: round(booted / 1000),
      long_tasks: r.tasks.length,
      longest_task_ms: round(Math.max(0, ...r.tasks)),
      frame_p95_ms: round(percentile(r.frames, 95)),
      frames_late_pct: round((100 * r.frames.filter((f) => f > 25).length) / r.frames.length),
      // Virtual seconds per wall second over the measured seconds (8 when it keeps up).
      speed_reached: round((to - from) / 1000 / seconds),
      elements: r.elements,
      heap_mib: r.heap_mib,
      chromium: browser.version(),
    }),
  );
  await context.close();
});
