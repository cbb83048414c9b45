// The proxy view, used as a learner would: expose the Deployment, pick a node and read
// kube-proxy's KUBE-SERVICES → KUBE-SVC → KUBE-SEP graph with each endpoint's probability;
// scale and watch it rewrite itself; curl the Service from a pod and watch the packet walk
// client → DNS → rules → endpoint → container, the matched rules lit in iptables-save;
// scale to zero and see the REJECT marked. Screenshots at three sizes, in both languages.
import { expect, test, type Page, type TestInfo } from '@playwright/test';
import { CLUSTER_TIMEOUT, ClusterPage } from './fixtures/cluster-page';

const sizes = [
  { name: '1440x900', width: 1440, height: 900 },
  { name: '1280x720', width: 1280, height: 720 },
  { name: '390x844', width: 390, height: 844 },
];

/** Waits until the packet has walked every hop (the panel's own animations are done). */
async function walked(page: Page) {
  await page.waitForFunction(() =>
    document.getAnimations().every((a) => {
      const t = (a.effect as KeyframeEffect | null)?.target;
      return !(t instanceof Element && t.closest('.proxy')) || a.playState !== 'running';
    }),
  );
}

async function shoot(page: Page, testInfo: TestInfo, name: string, part = 'proxy-view') {
  await page.getByTestId(part).scrollIntoViewIfNeeded();
  const shot = testInfo.outputPath(`${name}.png`);
  await page.screenshot({ path: shot });
  await testInfo.attach(name, { path: shot, contentType: 'image/png' });
}

test('kube-proxy rules and a curl path are drawn live', async ({ page }, testInfo) => {
  test.setTimeout(150_000);
  await page.setViewportSize({ width: 1440, height: 900 });
  const cluster = new ClusterPage(page);
  await cluster.goto();
  await cluster.fast();
  await cluster.applyAndWaitForReady(3);
  await cluster.run('kubectl expose deployment nginx --port=80');
  await cluster.expectOutput('service/nginx exposed');

  const proxy = page.getByTestId('proxy-view');
  await proxy.scrollIntoViewIfNeeded();
  await expect(proxy.getByTestId('packet-none')).toBeVisible();
  await proxy.getByTestId('proxy-node').selectOption('node-2');
  const graph = proxy.getByTestId('rule-graph');
  const svc = graph.locator('[data-kind=svc]', { hasText: 'default/nginx' });
  await expect(svc).toHaveCount(1, { timeout: CLUSTER_TIMEOUT });
  await expect(svc).toHaveAttribute('data-chain', /^KUBE-SVC-[A-Z2-7]{16}$/);
  // Three endpoints: 1/3, then 1/2 of the rest, then the last rule without a probability.
  await expect(graph.getByTestId('rule-probability').filter({ hasText: '0.33333333349' })).toHaveCount(1);
  await expect(proxy.getByTestId('iptables-save')).toContainText('-m statistic --mode random --probability 0.33333333349');

  // Scaling adds an endpoint: kube-proxy rewrites the rules, the graph follows.
  await cluster.run('kubectl scale deployment nginx --replicas=4');
  await expect(graph.getByTestId('rule-probability').filter({ hasText: '0.25000000000' })).toHaveCount(1, { timeout: CLUSTER_TIMEOUT });

  // curl the Service by name from one of its own pods (the nginx image has curl).
  await expect(cluster.podsOf('ready')).toHaveCount(4, { timeout: CLUSTER_TIMEOUT });
  const client = (await cluster.podNames('ready'))[0];
  await cluster.run(`kubectl exec ${client} -- curl -s nginx`);
  await cluster.expectOutput('Welcome to nginx!');

  // The flow's stage 7 no longer asks for a Service once one exists.
  await expect(cluster.stages.nth(6)).toHaveAttribute('data-state', 'lit');
  await expect(cluster.stages.nth(6)).not.toContainText('needs a Service');

  // The panel follows the request to the client's node and walks it hop by hop.
  const packet = proxy.getByTestId('packet-path');
  await expect(packet).toHaveAttribute('data-outcome', 'answered');
  const hops = proxy.getByTestId('hop');
  const kinds = await hops.evaluateAll((els) => els.map((e) => e.getAttribute('data-kind')));
  expect(kinds[0]).toBe('client');
  expect(kinds[1]).toBe('dns');
  expect(kinds).toContain('rule');
  expect(kinds.slice(-2)).toEqual(['endpoint', 'container']);
  await expect(proxy.getByTestId('packet-lane').locator('circle.packet')).toHaveCount(1);
  const running = await page.evaluate(() => document.getAnimations().filter((a) => a.playState === 'running').length);
  expect(running).toBeGreaterThan(0);
  await expect(graph.locator('[data-kind=svc][data-mark=taken]')).toContainText('default/nginx');
  await expect(graph.locator('[data-kind=sep][data-mark=taken]')).toHaveCount(1);
  const lit = proxy.getByTestId('iptables-save').locator('[data-mark=taken]');
  await expect(lit.filter({ hasText: /^-A KUBE-SERVICES .*default\/nginx cluster IP/ })).toHaveCount(1);
  await expect(lit.filter({ hasText: '-j DNAT --to-destination' })).toHaveCount(1);
  const chosen = await graph.locator('[data-kind=sep][data-mark=taken]').getAttribute('data-chain');
  await expect(lit.filter({ hasText: `-A ${chosen} ` }).first()).toBeVisible();
  // The message log under the panel lists the latest messages once scrolled to.
  const log = page.getByTestId('message-log');
  await log.scrollIntoViewIfNeeded();
  await expect(log.locator('.msg').first()).toBeVisible({ timeout: CLUSTER_TIMEOUT });
  await proxy.scrollIntoViewIfNeeded();
  // The text box scrolled itself to the first matched rule.
  await expect.poll(() => proxy.getByTestId('iptables-save').evaluate((e) => e.scrollTop)).toBeGreaterThan(0);

  // Keyboard: the node picker and the rules text are reachable.
  await proxy.getByTestId('proxy-node').focus();
  await page.keyboard.press('Tab');
  await expect(proxy.getByTestId('packet-replay').or(proxy.getByTestId('iptables-save')).first()).toBeVisible();

  for (const lang of ['en', 'zh']) {
    for (const size of sizes) {
      await page.setViewportSize({ width: size.width, height: size.height });
      await proxy.getByTestId('packet-replay').click();
      if (lang === 'en' && size.width === 1440) {
        await page.waitForTimeout(1200);
        await shoot(page, testInfo, 'proxy-view-moving-1440x900-en');
      }
      await walked(page);
      await shoot(page, testInfo, `proxy-view-${size.name}-${lang}`);
      await shoot(page, testInfo, `proxy-view-rules-${size.name}-${lang}`, 'iptables-save');
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(size.width);
    }
    if (lang === 'en') {
      await page.getByTestId('lang').click();
      await expect(proxy.getByRole('heading')).toHaveText('kube-proxy 规则');
    }
  }
  await page.getByTestId('lang').click();

  // Wide: the rules text beside the graph at 1440 and 1280; Esc puts it back.
  for (const size of sizes.slice(0, 2)) {
    await page.setViewportSize({ width: size.width, height: size.height });
    const wide = proxy.getByTestId('proxy-wide');
    await wide.click();
    await expect(wide).toHaveAttribute('aria-pressed', 'true');
    const g = await graph.boundingBox();
    const t = await proxy.getByTestId('iptables-save').boundingBox();
    expect(g && t).toBeTruthy();
    expect(t!.x).toBeGreaterThanOrEqual(g!.x + g!.width - 1);
    expect(Math.abs(t!.y - g!.y)).toBeLessThan(60);
    expect(g!.width).toBeGreaterThan(540);
    // Lifted over the page: what is drawn at the rules text (over the side column) is
    // the rules text, not a pane painted above it.
    const onTop = await page.evaluate(
      ([x, y]) => document.elementFromPoint(x, y)?.closest('[data-testid=iptables-save]') !== null,
      [t!.x + t!.width - 20, t!.y + 20],
    );
    expect(onTop).toBe(true);
    const shot = testInfo.outputPath(`proxy-view-wide-${size.name}-en.png`);
    await page.screenshot({ path: shot });
    await testInfo.attach(`proxy-view-wide-${size.name}-en`, { path: shot, contentType: 'image/png' });
    await proxy.getByTestId('iptables-save').focus();
    await page.keyboard.press('Escape');
    await expect(wide).toHaveAttribute('aria-pressed', 'false');
  }
  await page.setViewportSize({ width: 1440, height: 900 });

  // No endpoints: the Service's REJECT rule, and a curl from the node marked refused.
  await cluster.run('kubectl scale deployment nginx --replicas=0');
  const reject = graph.locator('[data-kind=reject]', { hasText: 'default/nginx' });
  await expect(reject).toHaveCount(1, { timeout: CLUSTER_TIMEOUT });
  const ip = ((await reject.textContent()) ?? '').match(/(\d+\.\d+\.\d+\.\d+):80/)?.[1];
  expect(ip).toBeTruthy();
  await cluster.run(`ssh node-1 curl -sS http://${ip}/`);
  await cluster.expectOutput("Couldn't connect to server");
  await expect(packet).toHaveAttribute('data-outcome', 'rejected', { timeout: CLUSTER_TIMEOUT });
  await expect(proxy.locator('[data-testid=hop][data-kind=failure]')).toContainText('REJECT');
  await expect(proxy.getByTestId('iptables-save').locator('[data-mark=taken]').filter({ hasText: 'has no endpoints' })).toHaveCount(1);
  await walked(page);
  await shoot(page, testInfo, 'proxy-view-reject-1440x900-en');
  expect(cluster.errors).toEqual([]);
});
