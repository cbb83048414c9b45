// The flow follows one pod: stages light when they happened for it, Pod活 only once it is
// Ready, and stage 7 names the scenario's own Deployment, then the Service once exposed.
import { expect, test } from '@playwright/test';
import { CLUSTER_TIMEOUT, ClusterPage } from './fixtures/cluster-page';

test('the flow follows a pod to Ready and notices its Service', async ({ page }) => {
  test.setTimeout(90_000);
  const cluster = new ClusterPage(page);
  await cluster.goto();
  // The learner's own Deployment is called web.
  await cluster.setFileText((await cluster.fileText()).replace('name: nginx', 'name: web'));
  const alive = page.getByTestId('pod-alive');
  const proxy = cluster.stages.nth(6);
  await cluster.apply.click();
  await expect(page.getByTestId('flow-pod')).toContainText('web-', { timeout: CLUSTER_TIMEOUT });
  await expect(proxy.getByTestId('stage-title')).toContainText('kubectl expose deployment web --port=80');
  // Bound while the image is pulled: the scheduler stage is lit, Pod活 is not.
  await expect(cluster.stages.nth(4)).toHaveAttribute('data-state', 'lit', { timeout: CLUSTER_TIMEOUT });
  // Pod活 never lights before the kubelet's stage: both read at one instant, while the
  // pod may turn Ready at any moment.
  const seen = await page.evaluate(() => {
    const stages = document.querySelectorAll('[data-testid=stage]');
    const alive = document.querySelector('[data-testid=pod-alive]');
    return { kubelet: stages[5]?.getAttribute('data-state'), alive: alive?.getAttribute('data-state') };
  });
  if (seen.kubelet !== 'lit') expect(seen.alive).toBe('idle');
  await cluster.fast();
  await expect(alive).toHaveAttribute('data-state', 'lit', { timeout: CLUSTER_TIMEOUT });
  for (let i = 0; i < 6; i++) await expect(cluster.stages.nth(i)).toHaveAttribute('data-state', 'lit');

  await cluster.run('kubectl expose deployment web --port=80');
  await cluster.expectOutput('service/web exposed');
  await expect(proxy).toHaveAttribute('data-state', 'lit', { timeout: CLUSTER_TIMEOUT });
  await expect(proxy).toHaveAttribute('title', /endpointslices/);
  expect(cluster.errors).toEqual([]);
});
