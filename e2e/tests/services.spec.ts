// Services on the diagram, used as a learner would: expose the Deployment, read the
// Service's chip (what `kubectl get svc` prints and how many endpoints are ready), pick it
// with the keyboard and see its endpoint pods marked, scale down and watch both follow,
// open the Service in the inspector. Screenshots at three sizes, in both languages.
import { expect, test } from '@playwright/test';
import { CLUSTER_TIMEOUT, ClusterPage } from './fixtures/cluster-page';

const sizes = [
  { name: '1440x900', width: 1440, height: 900 },
  { name: '1280x720', width: 1280, height: 720 },
  { name: '390x844', width: 390, height: 844 },
];

test('a Service is drawn with its endpoints, and picking it marks them', async ({ page }, testInfo) => {
  test.setTimeout(120_000);
  await page.setViewportSize({ width: 1440, height: 900 });
  const cluster = new ClusterPage(page);
  await cluster.goto();
  await cluster.fast();
  await cluster.applyAndWaitForReady(3);
  await expect(page.getByTestId('services')).toHaveCount(0);
  await cluster.run('kubectl expose deployment nginx --port=80 --type=NodePort');
  await cluster.expectOutput('service/nginx exposed');

  const chip = page.locator('[data-testid=service-chip][data-service="default/nginx"]');
  await expect(chip).toHaveAttribute('data-ready', '3', { timeout: CLUSTER_TIMEOUT });
  await expect(chip).toContainText('NodePort');
  await expect(chip).toContainText(/80:3\d{4}\/TCP/);
  await expect(chip).toContainText('3/3 endpoints ready');
  // The chip says what kubectl says.
  await cluster.run('kubectl get svc nginx --no-headers');
  const ip = (await chip.locator('.svc-ip').textContent()) ?? '';
  await cluster.expectOutput(new RegExp(`nginx\\s+NodePort\\s+${ip.replace(/\./g, '\\.')}`));

  // The keyboard picks it: its three pods are marked on the diagram.
  const pick = chip.locator('.svc-pick');
  await pick.focus();
  await page.keyboard.press('Enter');
  await expect(pick).toHaveAttribute('aria-pressed', 'true');
  const marked = cluster.diagram.locator('[data-testid=pod][data-endpoint=ready]');
  await expect(marked).toHaveCount(3);
  const shot = async (name: string) => {
    await chip.scrollIntoViewIfNeeded();
    const path = testInfo.outputPath(`${name}.png`);
    await page.screenshot({ path });
    await testInfo.attach(name, { path, contentType: 'image/png' });
  };
  await shot('services-marked-1440x900-en');

  // Scaling down: the chip and the marks follow the EndpointSlice.
  await cluster.run('kubectl scale deployment nginx --replicas=1');
  await expect(chip).toHaveAttribute('data-ready', '1', { timeout: CLUSTER_TIMEOUT });
  await expect(marked).toHaveCount(1, { timeout: CLUSTER_TIMEOUT });
  const endpointPod = await marked.getAttribute('data-name');
  expect(await cluster.podNames('ready')).toContain(endpointPod);

  for (const lang of ['en', 'zh']) {
    for (const size of sizes) {
      await page.setViewportSize({ width: size.width, height: size.height });
      await expect(chip).toBeVisible();
      await shot(`services-${size.name}-${lang}`);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(size.width);
    }
    if (lang === 'en') {
      await page.getByTestId('lang').click();
      await expect(chip).toContainText('1/1 个端点就绪');
    }
  }
  await page.getByTestId('lang').click();
  await page.setViewportSize({ width: 1440, height: 900 });

  // Picking it again clears the marks; the ⋯ button opens the Service in the inspector.
  await pick.click();
  await expect(pick).toHaveAttribute('aria-pressed', 'false');
  await expect(cluster.diagram.locator('[data-endpoint]')).toHaveCount(0);
  await chip.getByTestId('service-inspect').click();
  await expect(page.getByTestId('object-inspector')).toContainText('nginx');
  await expect(page.getByTestId('object-inspector')).toContainText('Service');

  // Deleting the Service removes its chip.
  await cluster.run('kubectl delete service nginx');
  await expect(chip).toHaveCount(0, { timeout: CLUSTER_TIMEOUT });
  expect(cluster.errors).toEqual([]);
});
