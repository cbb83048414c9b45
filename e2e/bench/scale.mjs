// Benchmark: the page while `kubectl scale deployment web --replicas=1500` runs on the
// hundred-nodes example, in headless Debian Chromium driven by Playwright, as a learner
// does it: pick the example, wait for its 200 pods, type the command, watch.
//
//   node bench/scale.mjs [--replicas N] [--speed X] [--delete]   prints one JSON object on stdout
//
// From the Enter that runs the command until every replica is Ready in the diagram it
// records every long task (the browser's PerformanceObserver: any task over 50 ms) and
// every animation frame's interval; it reports the longest task, how many there were,
// the frames' p50/p95/max, the wall time to all Ready and the page's element count then.
// With --delete it then types `kubectl delete deployment web` and reports the same from
// that Enter until the diagram draws no pod of the Deployment (the garbage collector's
// work: the ReplicaSet, then every pod).
import { numberArg, percentile, round, withPage } from './lib.mjs';

const replicas = numberArg('--replicas', 1500);
const speed = numberArg('--speed', 8);
const deleting = process.argv.includes('--delete');

function watchTasksAndFrames() {
  window.__bench = { tasks: [], frames: [], on: false };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) if (window.__bench.on) window.__bench.tasks.push(e.duration);
  }).observe({ type: 'longtask', buffered: false });
  let last = 0;
  const frame = (t) => {
    if (window.__bench.on && last) window.__bench.frames.push(t - last);
    last = t;
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
}

const ready = (page) => page.getByTestId('cluster-diagram').getAttribute('data-user-ready').then(Number);
const drawn = (page) => page.getByTestId('cluster-diagram').getAttribute('data-user-pods').then(Number);

/** Types `command` into the terminal and records tasks and frames from its Enter. */
async function runMeasured(page, command) {
  const input = page.getByTestId('terminal-input');
  await input.fill(command);
  await page.evaluate(() => {
    window.__bench.tasks = [];
    window.__bench.frames = [];
    window.__bench.on = true;
    window.__bench.start = performance.now();
  });
  await input.press('Enter');
}

/** Stops recording; what the page saw since `runMeasured`. */
const stopMeasuring = (page) =>
  page.evaluate(() => {
    window.__bench.on = false;
    return {
      wall: performance.now() - window.__bench.start,
      tasks: window.__bench.tasks,
      frames: window.__bench.frames,
      elements: document.getElementsByTagName('*').length,
      clock: document.querySelector('[data-testid=clock-value]')?.textContent,
      heap_mib: Number(document.querySelector('[data-testid=memory]')?.getAttribute('data-mib')),
    };
  });

/** Long tasks and frames of one measured phase. */
const phase = (r) => ({
  long_tasks: r.tasks.length,
  longest_task_ms: round(Math.max(0, ...r.tasks)),
  frames: r.frames.length,
  frame_p50_ms: round(percentile(r.frames, 50)),
  frame_p95_ms: round(percentile(r.frames, 95)),
  frame_max_ms: round(Math.max(...r.frames)),
  // Frames that came a vsync or more late (interval past 1.5 × 16.7 ms): p95 is
  // quantized to vsyncs, this says how far from the 5 % it allows a run was.
  frames_late_pct: round((100 * r.frames.filter((f) => f > 25).length) / r.frames.length),
});

await withPage(async (browser, url) => {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  await page.addInitScript(watchTasksAndFrames);
  await page.goto(url);
  await page.getByTestId('cluster-diagram').waitFor({ state: 'visible', timeout: 30_000 });
  await page.getByTestId('examples').selectOption('hundred-nodes');
  await page.getByTestId(`speed-${speed}`).click();
  const deadline = Date.now() + 120_000;
  while ((await ready(page)) < 200) {
    if (Date.now() > deadline) throw new Error('the example never got its 200 pods Ready');
    await page.waitForTimeout(250);
  }
  await runMeasured(page, `kubectl scale deployment web --replicas=${replicas}`);
  const until = Date.now() + 600_000;
  while ((await ready(page)) < replicas) {
    if (Date.now() > until) throw new Error(`not ${replicas} Ready after 10 minutes: ${await ready(page)}`);
    await page.waitForTimeout(250);
  }
  const r = await stopMeasuring(page);
  let deletion;
  if (deleting) {
    await runMeasured(page, 'kubectl delete deployment web');
    const gone = Date.now() + 600_000;
    while ((await drawn(page)) > 0) {
      if (Date.now() > gone) throw new Error(`pods still drawn after 10 minutes: ${await drawn(page)}`);
      await page.waitForTimeout(250);
    }
    const d = await stopMeasuring(page);
    deletion = { ...phase(d), to_all_gone_s: round(d.wall / 1000), virtual_clock: d.clock };
  }
  console.log(
    JSON.stringify({
      replicas,
      speed,
      ...phase(r),
      to_all_ready_s: round(r.wall / 1000),
      virtual_clock: r.clock,
      elements: r.elements,
      // The status line's heap in use at all Ready (MiB).
      heap_mib: r.heap_mib,
      ...(deletion ? { deletion } : {}),
      chromium: browser.version(),
    }),
  );
  await context.close();
});
