// A reload loses nothing: files, recorded commands and the virtual time come back.
import { expect, test } from '@playwright/test';
import { CLUSTER_TIMEOUT, ClusterPage } from './fixtures/cluster-page';

/** `01:05.320` → 65320 ms. */
function clockMs(text: string): number {
  const [m, s] = text.split(':');
  return Math.round((Number(m) * 60 + Number(s)) * 1000);
}

test('a reload keeps the edited file, replays the commands and returns to the same time', async ({ page }) => {
  const cluster = new ClusterPage(page);
  await cluster.goto();
  await cluster.fast();
  const edited = (await cluster.fileText()).replace('replicas: 3', 'replicas: 2');
  await cluster.setFileText(edited);
  await cluster.applyAndWaitForReady(2);
  await page.getByTestId('play-pause').click();
  const before = clockMs(await page.getByTestId('clock-value').innerText());

  await page.reload();
  await expect(cluster.diagram).toBeVisible();
  await cluster.expectFileText(edited);
  await cluster.expectOutput('kubectl apply -f nginx-deploy.yaml');
  await cluster.expectOutput('(replayed to t=');
  await expect(cluster.podsOf('ready')).toHaveCount(2, { timeout: CLUSTER_TIMEOUT });
  expect(clockMs(await page.getByTestId('clock-value').innerText())).toBeGreaterThanOrEqual(before);
  expect(cluster.errors).toEqual([]);
});
