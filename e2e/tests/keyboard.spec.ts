// The page works from the keyboard: the editor does not trap Tab, pods are focusable and
// open the inspector, the terminal output is announced.
import { expect, test } from '@playwright/test';
import { ClusterPage } from './fixtures/cluster-page';

test('Esc releases the editor: Tab indents, Esc then Tab moves on', async ({ page }) => {
  const cluster = new ClusterPage(page);
  await cluster.goto();
  await cluster.editor.click();
  await page.keyboard.press('Control+Home');
  const before = await cluster.fileText();
  await page.keyboard.press('Tab');
  expect(await cluster.fileText()).toBe(`  ${before}`);
  await expect(cluster.editor).toBeFocused();

  await page.keyboard.press('Escape');
  await expect(page.getByTestId('editor-keys')).toContainText('Tab now moves');
  await page.keyboard.press('Tab');
  await expect(cluster.editor).not.toBeFocused();
  expect(await cluster.fileText()).toBe(`  ${before}`);
  // Shift+Tab comes back, and typing edits again.
  await page.keyboard.press('Shift+Tab');
  await expect(cluster.editor).toBeFocused();
  expect(cluster.errors).toEqual([]);
});

test('a pod is reached with Tab, Enter opens its inspector and Esc goes back', async ({ page }) => {
  const cluster = new ClusterPage(page);
  await cluster.goto();
  await cluster.fast();
  await cluster.applyAndWaitForReady(3);
  await page.getByTestId('play-pause').click(); // hold still while we look

  const first = cluster.podsOf('ready').first();
  const name = await first.getAttribute('data-name');
  // From the node-count picker, Tab goes into the diagram's pods.
  await page.getByTestId('node-count').focus();
  let found = false;
  for (let i = 0; i < 40 && !found; i++) {
    await page.keyboard.press('Tab');
    found = await page.evaluate(() => document.activeElement?.getAttribute('data-testid') === 'pod');
  }
  expect(found).toBe(true);
  const focused = await page.evaluate(() => document.activeElement?.getAttribute('data-pod'));
  await page.keyboard.press('Enter');
  const card = page.getByTestId('pod-details');
  await expect(card).toBeVisible();
  await expect(card).toBeFocused();
  await expect(card).toContainText(focused!.split('/')[1]);
  // Tab reaches the card's buttons.
  await page.keyboard.press('Tab');
  await expect(card.getByRole('button', { name: 'kubectl describe' })).toBeFocused();
  await page.keyboard.press('Escape');
  await expect(card).toHaveCount(0);
  await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-pod'))).toBe(focused);
  expect(name).toBeTruthy();
  expect(cluster.errors).toEqual([]);
});

test('terminal output is a live region', async ({ page }) => {
  const cluster = new ClusterPage(page);
  await cluster.goto();
  const log = page.getByRole('log');
  await expect(log).toHaveAttribute('aria-live', 'polite');
  await cluster.run('kubectl get nodes');
  await expect(log).toContainText('node-1');
});
