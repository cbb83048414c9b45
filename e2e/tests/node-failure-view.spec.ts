// A powered-off node as the cluster sees it: still Ready (and its pods Running) until the
// node lifecycle controller notices, then Unknown with the unreachable taints and the time
// left until its pods are evicted; the simulator's own fact is a separate "sim" layer.
import { expect, test } from '@playwright/test';
import { CLUSTER_TIMEOUT, ClusterPage } from './fixtures/cluster-page';

test('a powered-off node is drawn as kubectl reports it, with the eviction countdown', async ({ page }, testInfo) => {
  const cluster = new ClusterPage(page);
  await cluster.goto();
  await cluster.fast();
  await cluster.applyAndWaitForReady(3);
  const node = cluster.diagram.locator('[data-testid=node][data-name=node-2]');

  await page.getByTestId('play-pause').click();
  await page.getByTestId('switch-power-node-2').click();
  // The simulator knows at once; the cluster does not.
  await expect(node).toHaveAttribute('data-sim', 'off');
  await expect(node).toHaveAttribute('data-state', 'ready');
  await expect(node.getByTestId('sim-fact')).toContainText('sim · powered off');

  await page.getByTestId('play-pause').click();
  await expect(node).toHaveAttribute('data-state', 'unknown', { timeout: CLUSTER_TIMEOUT });
  await expect(node).toHaveAttribute('data-taints', /unreachable:NoExecute/, { timeout: CLUSTER_TIMEOUT });
  await expect(node.getByTestId('node-taints')).toContainText(/evicts pods in \dm\d\ds/);
  await expect(node.locator('title').first()).toContainText('Unknown (NodeStatusUnknown)');
  // Its pods: what kubectl get pods says (not Ready), not "gone".
  const onNode = cluster.diagram.locator('[data-testid=pod][data-namespace=default][data-node=node-2]');
  if ((await onNode.count()) > 0) {
    await expect(onNode.first()).not.toHaveAttribute('data-class', 'ready', { timeout: CLUSTER_TIMEOUT });
  }
  const shot = testInfo.outputPath('node-failure.png');
  await page.screenshot({ path: shot });
  await testInfo.attach('node-failure', { path: shot, contentType: 'image/png' });
  expect(cluster.errors).toEqual([]);
});
