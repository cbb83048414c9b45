// Benchmark: time from navigation to the first rendered cluster diagram, in headless
// Debian Chromium driven by Playwright. Serves ../dist itself (serve-dist.mjs).
//
//   node bench/first-diagram.mjs [--runs N]      prints one JSON object on stdout
//
// Each run opens a fresh browser context (empty HTTP cache, nothing compiled cached) and
// navigates to the page. An init script watches the DOM; when
// [data-testid=cluster-diagram] is laid out with a non-zero size it notes performance.now()
// and then the next animation frame, the frame that paints it. performance.now() counts
// from the navigation's start, so the result covers fetching the HTML, JS and wasm,
// compiling and instantiating the wasm, mounting the app and that first frame.
// One warm-up run (not counted) comes first.
import { median, numberArg, round, withPage } from './lib.mjs';

const runs = numberArg('--runs', 21);
if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs needs a positive integer`);

function watchFirstDiagram() {
  window.__firstDiagram = new Promise((resolve) => {
    const seen = () => {
      const el = document.querySelector('[data-testid=cluster-diagram]');
      if (!el || el.getBoundingClientRect().width === 0) return false;
      const laidOut = performance.now();
      requestAnimationFrame(() => resolve({ laidOut, frame: performance.now() }));
      return true;
    };
    new MutationObserver((_, observer) => {
      if (seen()) observer.disconnect();
    }).observe(document, { childList: true, subtree: true });
  });
}

await withPage(async (browser, url) => {
  const frames = [];
  for (let i = 0; i <= runs; i++) {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.addInitScript(watchFirstDiagram);
    await page.goto(url, { waitUntil: 'commit' });
    await page.getByTestId('cluster-diagram').waitFor({ state: 'visible', timeout: 30_000 });
    const { frame } = await page.evaluate(() => window.__firstDiagram);
    if (i > 0) frames.push(frame); // run 0 is the warm-up
    await context.close();
  }
  console.log(
    JSON.stringify({
      runs,
      median_ms: round(median(frames)),
      min_ms: round(Math.min(...frames)),
      max_ms: round(Math.max(...frames)),
      samples_ms: frames.map(round),
      chromium: browser.version(),
    }),
  );
});
