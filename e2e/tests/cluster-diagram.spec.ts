// The page opens with the classic nginx Deployment in the editor and a three-node cluster.
import { expect, test } from '@playwright/test';
import { ClusterPage } from './fixtures/cluster-page';

test('opens with the control plane, three nodes and the nginx Deployment', async ({ page }, testInfo) => {
  const cluster = new ClusterPage(page);
  await cluster.goto();

  await expect(page).toHaveTitle('kubeloop');
  await expect(page.getByRole('heading', { name: 'kubeloop' })).toBeVisible();
  await expect(cluster.nodes).toHaveCount(3);
  await expect(cluster.nodes.first()).toContainText('node-1');
  await expect(cluster.components).toHaveCount(4);
  for (const name of ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler']) {
    await expect(cluster.component(name)).toHaveAttribute('data-state', 'running');
  }
  const text = await cluster.fileText();
  expect(text).toContain('kind: Deployment');
  expect(text).toContain('replicas: 3');
  expect(text).toContain('image: nginx:1.27');
  expect(text).toContain('containerPort: 80');
  await expect(cluster.stages).toHaveCount(7);
  await expect(page.getByTestId('clock-value')).not.toHaveText('00:00.000');

  const shot = testInfo.outputPath('cluster-diagram.png');
  await page.screenshot({ path: shot, fullPage: true });
  await testInfo.attach('cluster-diagram', { path: shot, contentType: 'image/png' });
  expect(cluster.errors).toEqual([]);
});
