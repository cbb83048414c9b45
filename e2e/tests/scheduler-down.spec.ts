// Stop kube-scheduler with its switch: new pods stay Pending until it starts again.
import { expect, test } from '@playwright/test';
import { CLUSTER_TIMEOUT, ClusterPage } from './fixtures/cluster-page';

test('with the scheduler stopped, scaled-up pods wait until it starts', async ({ page }) => {
  const cluster = new ClusterPage(page);
  await cluster.goto();
  await cluster.fast();
  await cluster.applyAndWaitForReady(3);

  await cluster.switchFor('kube-scheduler').click();
  await expect(cluster.component('kube-scheduler')).toHaveAttribute('data-state', 'stopped');
  await expect(cluster.switchFor('kube-scheduler')).toHaveAttribute('aria-checked', 'false');
  await cluster.expectOutput('sim stop kube-scheduler');
  await cluster.expectOutput('kube-scheduler stopped');

  await cluster.run('kubectl scale deployment nginx --replicas=5');
  await cluster.expectOutput('deployment.apps/nginx scaled');
  await expect(cluster.podsOf('unscheduled')).toHaveCount(2, { timeout: CLUSTER_TIMEOUT });
  await expect(cluster.podsOf('ready')).toHaveCount(3);

  await cluster.switchFor('kube-scheduler').click();
  await cluster.expectOutput('kube-scheduler started');
  await expect(cluster.podsOf('ready')).toHaveCount(5, { timeout: CLUSTER_TIMEOUT });
  await expect(cluster.podsOf('unscheduled')).toHaveCount(0);
  expect(cluster.errors).toEqual([]);
});
