// The timeline replays the run: a learner applies, follows one pod through the list,
// filters by component, opens the moment of its binding (the cluster as it was then, the
// terminal's scrollback of that moment), steps the scrubber with the keyboard, goes back
// to live, then watches a scale-up in slow motion at 0.1×.
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
    await page.getByTestId('timeline').scrollIntoViewIfNeeded();
    const shot = testInfo.outputPath(`${name}-${size.name}.png`);
    await page.screenshot({ path: shot });
    await testInfo.attach(`${name}-${size.name}`, { path: shot, contentType: 'image/png' });
  }
  await page.setViewportSize({ width: 1440, height: 900 });
}

test('the timeline opens a past moment, follows a pod and plays in slow motion', async ({ page }, testInfo) => {
  test.setTimeout(120_000);
  const cluster = new ClusterPage(page);
  await cluster.goto();
  await cluster.fast();
  await cluster.applyAndWaitForReady(3);
  const timeline = page.getByTestId('timeline');
  const rows = timeline.getByTestId('timeline-row');
  await expect(rows.first()).toBeVisible();
  // What kubectl sent: apply's GET (404) and its POST.
  await timeline.getByTestId('timeline-component').selectOption('kubectl');
  await expect(rows.filter({ hasText: 'POST /apis/apps/v1/namespaces/default/deployments' }).first()).toContainText('201 Created');
  await timeline.getByTestId('timeline-component').selectOption('');
  // Follow one pod: pick it in the diagram, then "Follow this pod".
  await page.getByTestId('play-pause').click();
  const pod = cluster.pods.first();
  const name = (await pod.getAttribute('data-name')) ?? '';
  await pod.click();
  await timeline.getByTestId('follow-pod').click();
  await expect(timeline.getByTestId('timeline-object')).toHaveValue(name);
  await expect(rows.first()).toBeVisible();
  for (const text of await rows.allInnerTexts()) expect(text).toContain(name);
  // Only what kube-scheduler sent or received about it: its binding is there.
  await timeline.getByTestId('timeline-component').selectOption('kube-scheduler');
  const binding = rows.filter({ hasText: `/pods/${name}/binding` }).first();
  await expect(binding).toBeVisible();
  for (const text of await rows.allInnerTexts()) expect(text).toContain('kube-scheduler');
  // Open the moment of the binding: the pod is bound but not yet Ready.
  const at = (await binding.locator('.tl-t').innerText()).trim();
  await binding.click();
  const bar = page.getByTestId('moment-bar');
  await expect(bar).toBeVisible();
  await expect(page.getByTestId('moment-at')).toContainText(at);
  await expect(bar.getByText('rebuilding')).toBeHidden({ timeout: CLUSTER_TIMEOUT });
  await expect(binding).toHaveClass(/focus/);
  await expect(cluster.podsOf('ready')).toHaveCount(0);
  await expect(cluster.terminalLines.filter({ hasText: 'deployment.apps/nginx created' }).first()).toBeVisible();
  // Commands wait for live.
  await cluster.run('kubectl get pods');
  await cluster.expectOutput('go back to live to run commands');
  await shoot(page, testInfo, 'timeline-moment');
  // The scrubber moves with the keyboard, a millisecond at a time.
  const scrubber = timeline.getByTestId('timeline-scrubber');
  const before = Number(await scrubber.inputValue());
  await scrubber.focus();
  await page.keyboard.press('ArrowRight');
  await expect(scrubber).toHaveValue(String(before + 1));
  await expect(page.getByTestId('moment-at')).toContainText(`${Math.floor((before + 1) / 1000)}.${String((before + 1) % 1000).padStart(3, '0')}s`);
  // Back to live from the keyboard.
  await page.getByTestId('back-to-live').focus();
  await page.keyboard.press('Enter');
  await expect(bar).toHaveCount(0);
  await expect(cluster.podsOf('ready')).toHaveCount(3);
  // A narrow span around now and every component again.
  await timeline.getByTestId('timeline-component').selectOption('');
  await timeline.getByTestId('follow-pod').click();
  await expect(timeline.getByTestId('timeline-object')).toHaveValue('');
  await timeline.getByTestId('span-1000').click();
  await expect(timeline.getByTestId('span-1000')).toHaveAttribute('aria-pressed', 'true');
  // Slow motion at 0.1×: a scale-up's chain crawls.
  await page.getByTestId('speed-0.1').click();
  await page.getByTestId('slowmo').click();
  await expect(page.getByTestId('slowmo')).toHaveAttribute('aria-pressed', 'true');
  await page.getByTestId('play-pause').click();
  await cluster.run('kubectl scale deployment nginx --replicas=5');
  await expect(page.getByTestId('clock-slowed')).toBeVisible({ timeout: CLUSTER_TIMEOUT });
  await shoot(page, testInfo, 'timeline-slowmo');
  expect(cluster.errors).toEqual([]);
});
