// A cluster of four hundred nodes, opened from a share link: the diagram is dense, one
// cell per node coloured by its condition with its pods as a strip inside it; the cell's
// tooltip names the node and its condition, the strip's counts its pods. Powering a node off marks its cell
// with the simulator's layer at once; the cluster's own view (its condition) changes
// only when the node controller notices. The failure switches list a hundred nodes, with
// a filter for the rest. Screenshots at three sizes in both languages.
import { deflateRawSync } from 'node:zlib';
import { expect, test } from '@playwright/test';
import { ClusterPage } from './fixtures/cluster-page';

const scenario = `apiVersion: kubeloop.dev/v1alpha1
kind: Scenario
metadata:
  name: four-hundred-nodes
spec:
  seed: 3
  nodes:
  - namePrefix: node-
    count: 400
  files:
    web.yaml: |
      apiVersion: apps/v1
      kind: Deployment
      metadata:
        name: web
      spec:
        replicas: 800
        selector:
          matchLabels:
            app: web
        template:
          metadata:
            labels:
              app: web
          spec:
            containers:
            - name: web
              image: nginx:1.27
  steps:
  - at: 1s
    run: kubectl apply -f web.yaml
`;

const sizes = [
  { name: 'desktop-1440x900', width: 1440, height: 900 },
  { name: 'laptop-1280x720', width: 1280, height: 720 },
  { name: 'phone-390x844', width: 390, height: 844 },
];

for (const lang of ['en', 'zh-CN']) {
  test(`four hundred nodes drawn as dense cells with their pods (${lang})`, async ({ page }, testInfo) => {
    test.setTimeout(300_000);
    await page.addInitScript((l) => localStorage.setItem('kubeloop.lang', l), lang);
    await page.setViewportSize({ width: 1440, height: 900 });
    const cluster = new ClusterPage(page);
    await cluster.goto('/#s=' + deflateRawSync(Buffer.from(scenario)).toString('base64url'));
    await expect(cluster.nodes).toHaveCount(400, { timeout: 60_000 });
    await expect(cluster.diagram.locator('.node.dense')).toHaveCount(400);
    // No pod chips and no compact bars (track and count) at this size: a strip per cell.
    await expect(page.getByTestId('pod-summary')).toHaveCount(400);
    await expect(cluster.diagram.locator('.summary-track, .summary-count')).toHaveCount(0);
    await expect(cluster.diagram.locator('[data-testid=pod]')).toHaveCount(0);
    await cluster.fast();
    await expect(cluster.diagram).toHaveAttribute('data-user-ready', '800', { timeout: 240_000 });
    const cell = cluster.diagram.locator('[data-testid=node][data-name=node-7]');
    await expect(cell.locator('title')).toContainText('node-7 · Ready');
    const strip = cluster.diagram.locator('[data-testid=pod-summary][data-node=node-7]');
    await expect(strip.locator('.summary-seg.ready')).toHaveCount(1);
    const pods = Number(await strip.getAttribute('data-pods'));
    expect(pods, 'node-7 runs some of the 800 pods and its two DaemonSet pods').toBeGreaterThan(2);
    await expect(strip.locator('.summary-seg.ready')).toHaveAttribute('data-count', String(pods));
    await expect(strip.locator('title')).toHaveText(new RegExp(lang === 'en' ? `^node-7: ${pods} pods · ${pods} Ready` : `^node-7：${pods} 个 Pod · ${pods} 就绪`));

    await cluster.run('sim poweroff node-7');
    await cluster.expectOutput('node-7 powered off');
    await expect(cell).toHaveAttribute('data-sim', 'off');
    await expect(cell.getByTestId('sim-fact')).toHaveCount(1);
    // The cluster has not noticed yet: the node is still Ready in its view.
    await expect(cell).toHaveAttribute('data-state', 'ready');

    // The failure switches list a hundred nodes, the one powered off first; a filter
    // reaches the others.
    const switches = page.getByTestId('node-switch');
    await expect(switches).toHaveCount(100);
    await expect(switches.first()).toHaveAttribute('data-node', 'node-7');
    await expect(page.getByTestId('nodes-more')).toContainText('300');
    await page.getByTestId('node-filter').click();
    await page.keyboard.type('node-37');
    await expect(switches).toHaveCount(11);
    await expect(switches.first()).toHaveAttribute('data-node', 'node-37');
    await expect(page.getByTestId('nodes-more')).toHaveCount(0);
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Backspace');
    await expect(switches).toHaveCount(100);

    for (const size of sizes) {
      await page.setViewportSize({ width: size.width, height: size.height });
      if (size.width <= 760) await page.locator('[data-pane-tab=cluster]').click();
      await expect(cluster.diagram).toBeVisible();
      const shot = testInfo.outputPath(`many-nodes-${size.name}-${lang}.png`);
      await page.screenshot({ path: shot });
      await testInfo.attach(`many-nodes-${size.name}-${lang}`, { path: shot, contentType: 'image/png' });
    }
    expect(cluster.errors).toEqual([]);
  });
}
