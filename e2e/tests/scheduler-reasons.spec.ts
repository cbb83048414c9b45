// Select a pod: every node card shows the scheduler's verdict and score, the winner
// starred; the inspector breaks the score down per plugin. A user's annotation is not
// taken for the scheduler's.
import { expect, test } from '@playwright/test';
import { ClusterPage } from './fixtures/cluster-page';

test("a selected pod shows the scheduler's reasons on the nodes and in the inspector", async ({ page }, testInfo) => {
  const cluster = new ClusterPage(page);
  await cluster.goto();
  await cluster.fast();
  await cluster.applyAndWaitForReady(3);
  await page.getByTestId('play-pause').click();
  const pod = cluster.podsOf('ready').first();
  const node = await pod.getAttribute('data-node');
  const name = (await pod.getAttribute('data-name'))!;
  await pod.click();

  const verdicts = cluster.diagram.getByTestId('verdict');
  await expect(verdicts).toHaveCount(3);
  await expect(cluster.diagram.locator('[data-verdict=winner]')).toHaveCount(1);
  await expect(cluster.diagram.locator('[data-verdict=winner]')).toContainText('★ Σ');

  const table = page.getByTestId('scheduling');
  await expect(table).toContainText('3 of 3 nodes evaluated');
  await expect(page.getByTestId('sched-row').filter({ hasText: `★ ${node}` })).toHaveCount(1);
  const fit = page.locator('[data-testid=sched-plugin][data-plugin=NodeResourcesFit]');
  await expect(fit).toBeVisible();
  const cells = await fit.locator('td').allInnerTexts();
  // plugin, raw, normalized, weight, weighted: weighted = normalized × weight.
  expect(Number(cells[4])).toBe(Number(cells[2]) * Number(cells[3]));
  await expect(page.locator('[data-testid=sched-plugin][data-plugin=TaintToleration] td').nth(3)).toHaveText('3');
  const shot = testInfo.outputPath('scheduler-reasons.png');
  await page.screenshot({ path: shot });
  await testInfo.attach('scheduler-reasons', { path: shot, contentType: 'image/png' });

  // The learner writes the annotation themselves: no longer the scheduler's results.
  await page.getByTestId('play-pause').click();
  await cluster.run(`kubectl annotate pod ${name} kubeloop.dev/selected-node=node-9 --overwrite`);
  await cluster.expectOutput(`pod/${name} annotated`);
  await expect(table).toHaveCount(0);
  await expect(verdicts).toHaveCount(0);
  expect(cluster.errors).toEqual([]);
});
