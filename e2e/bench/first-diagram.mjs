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
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { chromium } from '@playwright/test';
import { chromiumArgs, chromiumPath } from '../chromium.mjs';

const args = process.argv.slice(2);
const runsArg = args.indexOf('--runs');
const runs = runsArg >= 0 ? Number(args[runsArg + 1]) : 21;
if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs needs a positive integer`);

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function waitForServer(url, server) {
  for (let i = 0; i < 100; i++) {
    if (server.exitCode !== null) throw new Error(`serve-dist exited with ${server.exitCode}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`server at ${url} did not start`);
}

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

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const round = (x) => Math.round(x * 10) / 10;

const port = await freePort();
const url = `http://127.0.0.1:${port}/`;
const server = spawn(process.execPath, [fileURLToPath(new URL('../serve-dist.mjs', import.meta.url)), String(port)], {
  stdio: ['ignore', 'ignore', 'inherit'],
});
let browser;
try {
  await waitForServer(url, server);
  browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs, headless: true });
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
} finally {
  await browser?.close();
  server.kill();
}
