// The proxy view in IPVS mode, with reduced motion: a learner opens a shared scenario whose
// kube-proxies run `--proxy-mode=ipvs`, applies a Deployment behind a Service and reads the
// virtual server with its real servers (scheduler rr) beside `ipvsadm -Ln`; a curl's path
// is drawn at once, without a moving dot, as prefers-reduced-motion asks.
import { deflateRawSync } from 'node:zlib';
import { expect, test } from '@playwright/test';
import { CLUSTER_TIMEOUT, ClusterPage } from './fixtures/cluster-page';

const scenario = `apiVersion: kubeloop.dev/v1alpha1
kind: Scenario
metadata:
  name: ipvs-web
spec:
  seed: 5
  proxyMode: ipvs
  files:
    web.yaml: |
      apiVersion: apps/v1
      kind: Deployment
      metadata:
        name: web
      spec:
        replicas: 2
        selector:
          matchLabels: {app: web}
        template:
          metadata:
            labels: {app: web}
          spec:
            containers:
            - name: nginx
              image: nginx:1.27
      ---
      apiVersion: v1
      kind: Service
      metadata:
        name: web
      spec:
        selector: {app: web}
        ports:
        - port: 80
`;

test('IPVS virtual servers and a curl path, drawn at once with reduced motion', async ({ page }, testInfo) => {
  test.setTimeout(120_000);
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.emulateMedia({ reducedMotion: 'reduce' });
  const cluster = new ClusterPage(page);
  await cluster.goto('/#s=' + deflateRawSync(Buffer.from(scenario)).toString('base64url'));
  await expect(page.getByTestId('link-offer')).toHaveCount(0);
  await cluster.expectFileText(/kind: Deployment/);
  await cluster.fast();
  await cluster.applyAndWaitForReady(2);

  const proxy = page.getByTestId('proxy-view');
  await proxy.scrollIntoViewIfNeeded();
  await proxy.getByTestId('proxy-node').selectOption('node-1');
  const text = proxy.getByTestId('iptables-save');
  // The Service is an IPVS virtual server with round robin over its two pods.
  await expect(text).toContainText(/TCP {2}10\.\d+\.\d+\.\d+:80 rr/, { timeout: CLUSTER_TIMEOUT });
  await expect(text).toContainText(/-> 10\.244\.\d+\.\d+:80 +Masq +1/);
  await expect(text).toContainText('KUBE-SERVICES');
  const graph = proxy.getByTestId('rule-graph');
  const svc = graph.locator('[data-kind=svc]', { hasText: 'default/web' });
  await expect(svc).toHaveCount(1);
  // Every real server is reached round robin: no iptables probabilities in this mode.
  const labels = graph.getByTestId('rule-probability');
  expect(await labels.count()).toBeGreaterThanOrEqual(2);
  await expect(labels.filter({ hasText: 'rr' })).toHaveCount(await labels.count());
  const pods = await cluster.podNames('ready');
  await cluster.run(`kubectl exec ${pods[0]} -- curl -s web`);
  await cluster.expectOutput('Welcome to nginx!');
  const packet = proxy.getByTestId('packet-path');
  await expect(packet).toHaveAttribute('data-outcome', 'answered', { timeout: CLUSTER_TIMEOUT });
  // Reduced motion: every hop is shown at once, no dot travels, nothing animates in the panel.
  await expect(proxy.getByTestId('packet-lane').locator('circle.packet')).toHaveCount(0);
  const moving = await page.evaluate(() =>
    document.getAnimations().filter((a) => {
      const t = (a.effect as KeyframeEffect | null)?.target;
      return t instanceof Element && t.closest('.proxy') && a.playState === 'running';
    }).length,
  );
  expect(moving).toBe(0);
  const hops = proxy.getByTestId('hop');
  await expect(hops.first()).toBeVisible();
  const kinds = await hops.evaluateAll((els) => els.map((e) => e.getAttribute('data-kind')));
  expect(kinds.slice(-2)).toEqual(['endpoint', 'container']);
  await expect(graph.locator('[data-kind=svc][data-mark=taken]')).toContainText('default/web');
  const shot = testInfo.outputPath('proxy-ipvs-1440x900.png');
  await proxy.scrollIntoViewIfNeeded();
  await page.screenshot({ path: shot });
  await testInfo.attach('proxy-ipvs-1440x900', { path: shot, contentType: 'image/png' });
  expect(cluster.errors).toEqual([]);
});
