// The causal trace of a pod: eight stages, each with the request behind it and its
// latency; a stage opens its moment in the timeline; exposing the Deployment lights the
// endpoint stage with the kube-proxies it reached and the Service's trace with the rules its
// endpoints wrote; a rollout says which ReplicaSet scaled when and why.
import { expect, test, type Page, type TestInfo } from '@playwright/test';
import { CLUSTER_TIMEOUT, ClusterPage } from './fixtures/cluster-page';

const sizes = [
  { name: '1440x900', width: 1440, height: 900 },
  { name: '1280x720', width: 1280, height: 720 },
  { name: 'phone-390x844', width: 390, height: 844 },
];

async function shoot(page: Page, testInfo: TestInfo, name: string) {
  for (const size of sizes) {
    await page.setViewportSize({ width: size.width, height: size.height });
    // On a phone the trace sits behind the Controls tab.
    const phone = size.width <= 760;
    if (phone) await page.locator('[data-pane-tab=controls]').click();
    await page.getByTestId('trace').scrollIntoViewIfNeeded();
    const shot = testInfo.outputPath(`${name}-${size.name}.png`);
    await page.screenshot({ path: shot });
    await testInfo.attach(`${name}-${size.name}`, { path: shot, contentType: 'image/png' });
    if (phone) await page.locator('[data-pane-tab=cluster]').click();
  }
  await page.setViewportSize({ width: 1440, height: 900 });
}

test('a pod trace shows each stage with its request and opens it in the timeline', async ({ page }, testInfo) => {
  test.setTimeout(120_000);
  const cluster = new ClusterPage(page);
  await cluster.goto();
  await cluster.fast();
  await cluster.applyAndWaitForReady(3);
  const trace = page.getByTestId('trace');
  const stages = trace.getByTestId('trace-stage');
  await expect(stages).toHaveCount(8);
  await expect(trace.getByTestId('trace-pod')).toContainText('default/nginx-');
  for (const i of [0, 1, 2, 3, 4, 5, 7]) await expect(stages.nth(i)).toHaveClass(/lit/, { timeout: CLUSTER_TIMEOUT });
  await expect(stages.nth(6)).not.toHaveClass(/lit/);
  await expect(stages.nth(0)).toContainText('POST /apis/apps/v1/namespaces/default/deployments 201');
  await expect(stages.nth(1)).toContainText('Txn Put /registry/deployments/default/nginx');
  await expect(stages.nth(4)).toContainText('kube-scheduler');
  await expect(stages.nth(4)).toContainText('/binding 201');
  await expect(stages.nth(4)).toContainText('woken by ADDED Pod');
  await expect(stages.nth(5)).toContainText('RunPodSandbox');
  await shoot(page, testInfo, 'trace-pod');
  // The scheduler's stage opens its moment, its request picked in the timeline.
  await page.getByTestId('play-pause').click();
  const when = (await stages.nth(4).locator('.tr-when').innerText()).trim();
  await stages.nth(4).getByRole('button').click();
  await expect(page.getByTestId('moment-at')).toContainText(when);
  const focused = page.locator('[data-testid=timeline-row].focus');
  await expect(focused).toContainText('/binding');
  // Back to live by keyboard; then expose and roll out.
  await page.getByTestId('back-to-live').focus();
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('moment-bar')).toHaveCount(0);
  await page.getByTestId('play-pause').click();
  await cluster.run('kubectl expose deployment nginx --port=80');
  await cluster.expectOutput('service/nginx exposed');
  await expect(stages.nth(6)).toHaveClass(/lit/, { timeout: CLUSTER_TIMEOUT });
  await expect(stages.nth(6)).toContainText('kube-proxy node-');
  // The Service's trace: the EndpointSlice write that added the pods' jumps to its rules.
  const svc = trace.getByTestId('service-trace');
  await expect(svc).toContainText('default/nginx');
  const added = svc.getByTestId('service-rules').locator('li.added');
  await expect(added).toHaveCount(3, { timeout: CLUSTER_TIMEOUT });
  await expect(added.first()).toContainText(/^\+ -A KUBE-SVC-[A-Z0-9]{16} -j KUBE-SEP-[A-Z0-9]{16} \(10\.244\.\d+\.\d+:80\)$/);
  await expect(svc.getByTestId('service-change').first()).toContainText('POST /apis/discovery.k8s.io/v1/namespaces/default/endpointslices 201 Created');
  await cluster.run('kubectl set image deployment/nginx nginx=nginx:1.28');
  await cluster.expectOutput('deployment.apps/nginx image updated');
  // The trace follows the newest pod; its Deployment's rollout lists the scalings.
  const steps = page.getByTestId('rollout-step');
  await expect(steps.filter({ hasText: 'Scaled down replica set' }).first()).toBeVisible({ timeout: CLUSTER_TIMEOUT });
  await expect(steps.filter({ hasText: 'because kubectl PATCH' }).first()).toBeVisible();
  await expect(steps.filter({ hasText: 'because MODIFIED ReplicaSet' }).first()).toBeVisible();
  await shoot(page, testInfo, 'trace-rollout');
  expect(cluster.errors).toEqual([]);
});
