// Scaling the hundred-nodes example to six hundred pods: the page keeps answering the mouse
// and the keyboard while the engine works in time-boxed slices, and the diagram draws a
// bar of pod states per node instead of hundreds of unreadable chips.
import { expect, test } from '@playwright/test';
import { ClusterPage } from './fixtures/cluster-page';

test('the page stays responsive while a Deployment scales to six hundred pods', async ({ page }, testInfo) => {
  test.setTimeout(240_000);
  await page.addInitScript(() => {
    (window as any).__longTasks = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) (window as any).__longTasks.push(e.duration);
    }).observe({ type: 'longtask' });
  });
  const cluster = new ClusterPage(page);
  await cluster.goto();
  await page.getByTestId('examples').selectOption('hundred-nodes');
  await cluster.fast();
  await expect(cluster.nodes).toHaveCount(100);
  await expect(cluster.diagram).toHaveAttribute('data-user-ready', '200', { timeout: 120_000 });
  await expect(page.getByTestId('pod-summary')).toHaveCount(100);
  await expect(cluster.diagram.locator('[data-testid=pod]')).toHaveCount(0);

  await page.evaluate(() => ((window as any).__longTasks = []));
  await cluster.run('kubectl scale deployment web --replicas=600');
  await cluster.expectOutput('deployment.apps/web scaled');
  // While the burst runs, Pause answers at once and stops the clock.
  await expect(cluster.diagram).not.toHaveAttribute('data-user-pods', '200', { timeout: 30_000 });
  const pressed = Date.now();
  await page.getByTestId('play-pause').click();
  await expect(page.getByTestId('play-pause')).toHaveAttribute('aria-pressed', 'false');
  expect(Date.now() - pressed).toBeLessThan(2_000);
  const clock = await page.getByTestId('clock-value').innerText();
  await page.waitForTimeout(300);
  await expect(page.getByTestId('clock-value')).toHaveText(clock);
  await page.keyboard.press('Space');
  await expect(page.getByTestId('play-pause')).toHaveAttribute('aria-pressed', 'true');

  await expect(cluster.diagram).toHaveAttribute('data-user-ready', '600', { timeout: 200_000 });
  const longest = await page.evaluate(() => Math.max(0, ...(window as any).__longTasks));
  testInfo.annotations.push({ type: 'longest task (ms)', description: String(longest) });
  // The benchmark holds the 50 ms target; here a loaded CI machine gets slack.
  expect(longest).toBeLessThan(400);
  const elements = await page.evaluate(() => document.getElementsByTagName('*').length);
  expect(elements).toBeLessThan(3_000);
  const bar = page.locator('[data-testid=pod-summary][data-node=node-1]');
  await expect(bar.locator('title')).toContainText(/node-1: \d+ pods/);

  const shot = testInfo.outputPath('hundred-nodes-600-pods.png');
  await page.screenshot({ path: shot });
  await testInfo.attach('hundred-nodes-600-pods', { path: shot, contentType: 'image/png' });
  expect(cluster.errors).toEqual([]);
});
