// A reload loses nothing: files and recorded commands come back from localStorage.
import { expect, test } from '@playwright/test';
import { CLUSTER_TIMEOUT, ClusterPage } from './fixtures/cluster-page';

test('a reload keeps the edited file and replays the commands', async ({ page }) => {
  const cluster = new ClusterPage(page);
  await cluster.goto();
  await cluster.fast();
  const edited = (await cluster.fileText()).replace('replicas: 3', 'replicas: 2');
  await cluster.setFileText(edited);
  await cluster.applyAndWaitForReady(2);

  await page.reload();
  await expect(cluster.diagram).toBeVisible();
  await expect(cluster.editor).toHaveValue(edited);
  await cluster.fast();
  await cluster.expectOutput('kubectl apply -f nginx-deploy.yaml');
  await expect(cluster.podsOf('ready')).toHaveCount(2, { timeout: CLUSTER_TIMEOUT });
  expect(cluster.errors).toEqual([]);
});
