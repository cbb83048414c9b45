// Apply on the default Deployment: three Running pods spread over the nodes, stages lit.
import { expect, test } from '@playwright/test';
import { CLUSTER_TIMEOUT, ClusterPage } from './fixtures/cluster-page';

test('Apply rolls out three Running pods over the nodes', async ({ page }) => {
  const cluster = new ClusterPage(page);
  await cluster.goto();
  await cluster.fast();

  await cluster.applyAndWaitForReady(3);

  await cluster.expectOutput('kubectl apply -f nginx-deploy.yaml');
  await cluster.expectOutput('deployment.apps/nginx created');
  const nodes = await cluster.podsOf('ready').evaluateAll((els) => els.map((e) => e.getAttribute('data-node')));
  expect(new Set(nodes).size).toBeGreaterThanOrEqual(2);
  for (let i = 0; i < 6; i++) {
    await expect(cluster.stages.nth(i)).toHaveAttribute('data-state', 'lit', { timeout: CLUSTER_TIMEOUT });
  }
  // Each pod's IP is on its chip's tooltip, from its node's podCIDR.
  await expect(cluster.podsOf('ready').first().locator('title')).toContainText(/IP 10\.244\.\d+\.\d+/);
  expect(cluster.errors).toEqual([]);
});
