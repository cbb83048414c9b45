// The object browser, the inspector and the etcd browser, as a learner uses them: apply
// the nginx Deployment, open it in the browser, read its YAML, walk its owner tree to a
// ReplicaSet and a Pod, open the etcd tab and a diff between two revisions, see the
// request that wrote it, then the etcd browser's keys and watch stream. By mouse and by
// keyboard, in English and 简体中文, at three sizes (on a phone the panel is behind the
// Controls tab).
import { expect, test, type Page, type TestInfo } from '@playwright/test';
import { CLUSTER_TIMEOUT, ClusterPage } from './fixtures/cluster-page';

const sizes = [
  { name: '1440x900', width: 1440, height: 900 },
  { name: '1280x720', width: 1280, height: 720 },
  { name: 'phone-390x844', width: 390, height: 844 },
];

async function shoot(page: Page, testInfo: TestInfo, name: string, target: string) {
  for (const size of sizes) {
    await page.setViewportSize({ width: size.width, height: size.height });
    const phone = size.width <= 760;
    if (phone) await page.locator('[data-pane-tab=controls]').click();
    await page.getByTestId(target).scrollIntoViewIfNeeded();
    const shot = testInfo.outputPath(`${name}-${size.name}.png`);
    await page.screenshot({ path: shot });
    await testInfo.attach(`${name}-${size.name}`, { path: shot, contentType: 'image/png' });
    if (phone) await page.locator('[data-pane-tab=cluster]').click();
  }
  await page.setViewportSize({ width: 1440, height: 900 });
}

for (const lang of ['en', 'zh-CN']) {
  test(`the inspector walks a Deployment to its Pods, its etcd revisions and the watch stream (${lang})`, async ({ page }, testInfo) => {
    test.setTimeout(150_000);
    await page.addInitScript((l) => localStorage.setItem('kubeloop.lang', l), lang);
    const cluster = new ClusterPage(page);
    await cluster.goto();
    await cluster.fast();
    await cluster.applyAndWaitForReady(3);
    // Scale, so the Deployment has a spec change between two revisions.
    await cluster.run('kubectl scale deployment nginx --replicas=4');
    await cluster.expectOutput('deployment.apps/nginx scaled');
    await expect(cluster.podsOf('ready')).toHaveCount(4, { timeout: CLUSTER_TIMEOUT });

    const objects = page.getByTestId('objects');
    await objects.scrollIntoViewIfNeeded();
    // The browser: kinds with counts; the filter narrows by name.
    await expect(objects.locator('[data-testid=object-group][data-kind=Node]')).toBeVisible();
    await objects.getByTestId('object-filter').fill('nginx');
    const deploy = objects.locator('[data-testid=object-item][data-object="Deployment/default/nginx"]');
    await expect(deploy).toBeVisible();
    await expect(objects.locator('[data-testid=object-group][data-kind=Pod] [data-testid=object-item]')).toHaveCount(4);
    await deploy.click();

    // YAML as kubectl prints it.
    const insp = page.getByTestId('object-inspector');
    await expect(insp).toHaveAttribute('data-object', 'Deployment/default/nginx');
    const yaml = insp.getByTestId('inspect-yaml');
    await expect(yaml).toContainText('apiVersion: apps/v1\nkind: Deployment\nmetadata:');
    await expect(yaml).toContainText('replicas: 4');
    await shoot(page, testInfo, `inspect-yaml-${lang}`, 'object-inspector');

    // Events, as kubectl describe lists them.
    await insp.getByTestId('inspect-tab-events').click();
    await expect(insp.getByTestId('inspect-events')).toContainText('ScalingReplicaSet');
    await expect(insp.getByTestId('inspect-events')).toContainText('deployment-controller');

    // The owner tree by keyboard: ArrowRight from Events to Owner tree.
    await insp.getByTestId('inspect-tab-events').focus();
    await page.keyboard.press('ArrowRight');
    await expect(insp.getByTestId('inspect-tab-owners')).toBeFocused();
    const tree = insp.getByTestId('inspect-tree');
    await expect(tree.locator('[data-testid=tree-row][data-depth="2"]')).toHaveCount(4);
    const rs = tree.locator('[data-testid=tree-row][data-depth="1"]').first();
    await expect(rs).toContainText('ReplicaSet default/nginx-');
    await rs.getByRole('button').click();
    await expect(insp).toHaveAttribute('data-object', /^ReplicaSet\/default\/nginx-/);
    await shoot(page, testInfo, `inspect-tree-${lang}`, 'object-inspector');
    // From the ReplicaSet down to a Pod, by keyboard.
    const pod = insp.locator('[data-testid=tree-row][data-depth="1"]').first();
    await expect(pod).toContainText('Pod default/nginx-');
    await pod.getByRole('button').focus();
    await page.keyboard.press('Enter');
    await expect(insp).toHaveAttribute('data-object', /^Pod\/default\/nginx-/);
    await expect(insp.locator('[data-testid=tree-row][data-depth="-2"]')).toContainText('Deployment default/nginx');
    // The pod card under the diagram keeps its scheduler content.
    await expect(page.getByTestId('pod-details').getByTestId('scheduling')).toBeVisible();
    // Back up to the Deployment.
    await insp.locator('[data-testid=tree-row][data-depth="-2"]').getByRole('button').click();
    await expect(insp).toHaveAttribute('data-object', 'Deployment/default/nginx');

    // etcd: the key, its revisions, the diff of the scale.
    await insp.getByTestId('inspect-tab-etcd').click();
    await expect(insp.getByTestId('inspect-etcd-key')).toHaveText('/registry/deployments/default/nginx');
    const revs = insp.getByTestId('etcd-revision');
    expect(await revs.count()).toBeGreaterThanOrEqual(3);
    // Find the revision whose diff sets replicas: 4.
    let found = false;
    for (let i = (await revs.count()) - 1; i >= 1 && !found; i--) {
      await revs.nth(i).click();
      const diff = insp.getByTestId('etcd-diff');
      if ((await diff.count()) > 0 && (await diff.innerText()).includes('+  replicas: 4')) found = true;
    }
    expect(found).toBe(true);
    await expect(insp.getByTestId('etcd-diff')).toContainText('-  replicas: 3');
    await shoot(page, testInfo, `inspect-diff-${lang}`, 'object-inspector');

    // The request that wrote the current revision, with its spans.
    await insp.getByTestId('inspect-tab-request').click();
    const req = insp.getByTestId('inspect-request');
    await expect(req).toContainText('/apis/apps/v1/namespaces/default/deployments/nginx');
    for (const stage of ['authentication', 'authorization', 'admission', 'validation', 'etcd']) {
      await expect(req.locator(`[data-testid=span-row][data-stage=${stage}]`)).toBeVisible();
    }

    // The etcd browser: keys under a prefix, then the watch stream, newest first.
    await page.getByTestId('browser-tab-objects').focus();
    await page.keyboard.press('ArrowRight');
    await expect(page.getByTestId('browser-tab-etcd')).toHaveAttribute('aria-selected', 'true');
    const browser = page.getByTestId('etcd-browser');
    await expect(browser.locator('[data-testid=etcd-key][data-key="/registry/deployments/default/nginx"]')).toBeVisible();
    await browser.locator('[data-testid=etcd-prefix][data-prefix="/registry/pods/"]').click();
    await expect(browser.locator('[data-testid=etcd-key][data-key^="/registry/pods/default/nginx-"]')).toHaveCount(4);
    const events = browser.getByTestId('watch-event');
    await expect(events.first()).toBeVisible();
    // Read the list at one instant: the stream grows while the cluster runs.
    const stream = await events.evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-revision'))));
    expect(stream.length).toBeGreaterThanOrEqual(2);
    expect(stream).toEqual([...stream].sort((a, b) => b - a));
    expect(stream[0]).toBeGreaterThan(stream[stream.length - 1]);
    await shoot(page, testInfo, `etcd-browser-${lang}`, 'etcd-browser');
    expect(cluster.errors).toEqual([]);
  });
}
