// The page loads the wasm app and draws the cluster diagram.
import { expect, test } from '@playwright/test';
import { ClusterPage } from './fixtures/cluster-page';

test('shows the cluster diagram with three nodes', async ({ page }, testInfo) => {
  const cluster = new ClusterPage(page);
  await cluster.goto();

  await expect(page).toHaveTitle('kubeloop');
  await expect(page.getByRole('heading', { name: 'kubeloop' })).toBeVisible();
  await expect(cluster.nodes).toHaveCount(3);
  await expect(cluster.nodes.first()).toContainText('node-1');

  const shot = testInfo.outputPath('cluster-diagram.png');
  await page.screenshot({ path: shot, fullPage: true });
  await testInfo.attach('cluster-diagram', { path: shot, contentType: 'image/png' });
  expect(cluster.errors).toEqual([]);
});

test('adds a node to the diagram when Add node is clicked', async ({ page }) => {
  const cluster = new ClusterPage(page);
  await cluster.goto();

  await cluster.addNode();

  await expect(cluster.nodes).toHaveCount(4);
  await expect(cluster.nodes.last()).toContainText('node-4');
  expect(cluster.errors).toEqual([]);
});
