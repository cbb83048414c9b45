// Takes the README's screenshot (docs/screenshot.png) from the release build in ../dist:
// the nginx Deployment applied and exposed, a curl from one of its pods walked through
// node-2's kube-proxy rules, the timeline under the diagram and the pod's causal trace.
//
//   node readme-screenshot.mjs [OUT]        (default ../docs/screenshot.png)
import { fileURLToPath } from 'node:url';
import { withPage } from './bench/lib.mjs';

const out = process.argv[2] ?? fileURLToPath(new URL('../docs/screenshot.png', import.meta.url));
const timeout = 60_000;

async function run(page, line) {
  const input = page.getByTestId('terminal-input');
  await input.fill(line);
  await input.press('Enter');
}

await withPage(async (browser, url) => {
  const context = await browser.newContext({ viewport: { width: 1440, height: 2000 }, deviceScaleFactor: 1 });
  const page = await context.newPage();
  await page.goto(url);
  await page.getByTestId('cluster-diagram').waitFor({ state: 'visible', timeout });
  await page.getByTestId('speed-8').click();
  await page.getByTestId('apply').click();
  const ready = page.locator('[data-testid=pod][data-namespace=default][data-class=ready]');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=pod][data-namespace=default][data-class=ready]').length === 3, null, { timeout });
  await run(page, 'kubectl expose deployment nginx --port=80');
  await page.getByTestId('terminal-line').filter({ hasText: 'service/nginx exposed' }).first().waitFor({ timeout });
  const client = await ready.first().getAttribute('data-name');
  await run(page, `kubectl exec ${client} -- curl -s nginx`);
  await page.getByTestId('terminal-line').filter({ hasText: 'Welcome to nginx!' }).first().waitFor({ timeout });
  await page.getByTestId('packet-path').waitFor({ timeout });
  await page.getByTestId('play-pause').click();
  await page.getByTestId('packet-replay').click();
  // The packet has walked every hop of its path.
  await page.waitForTimeout(5000);
  await page.screenshot({ path: out });
  await context.close();
  console.log(`wrote ${out}`);
});
