// Delete a pod from the terminal: the ReplicaSet controller replaces it.
import { expect, test } from '@playwright/test';
import { CLUSTER_TIMEOUT, ClusterPage } from './fixtures/cluster-page';

test('a pod deleted in the terminal is replaced', async ({ page }) => {
  const cluster = new ClusterPage(page);
  await cluster.goto();
  await cluster.fast();
  await cluster.applyAndWaitForReady(3);
  const before = await cluster.podNames('ready');

  await cluster.run(`kubectl delete pod ${before[0]}`);

  await cluster.expectOutput(`pod "${before[0]}" deleted`);
  await expect(cluster.pods.and(page.locator(`[data-name="${before[0]}"]`))).toHaveCount(0, { timeout: CLUSTER_TIMEOUT });
  await expect(cluster.podsOf('ready')).toHaveCount(3, { timeout: CLUSTER_TIMEOUT });
  const after = await cluster.podNames('ready');
  expect(after).not.toContain(before[0]);
  expect(after.filter((n) => !before.includes(n))).toHaveLength(1);
  expect(cluster.errors).toEqual([]);
});
