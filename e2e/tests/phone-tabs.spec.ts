// On a phone the four panes are tabs: the diagram first, then the editor, the terminal and
// the controls, each reached by tapping its tab or with the arrow keys in the tab list.
import { expect, test } from '@playwright/test';
import { ClusterPage } from './fixtures/cluster-page';

for (const lang of ['en', 'zh-CN']) {
  test(`a phone shows one pane at a time behind tabs (${lang})`, async ({ page }, testInfo) => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.addInitScript((l) => localStorage.setItem('kubeloop.lang', l), lang);
    const cluster = new ClusterPage(page);
    await cluster.goto();
    const tabs = page.getByTestId('pane-tabs');
    await expect(tabs).toBeVisible();
    const tab = (id: string) => page.locator(`[data-pane-tab=${id}]`);
    await expect(tab('cluster')).toHaveAttribute('aria-selected', 'true');
    await expect(page.locator('.diagram-pane')).toBeVisible();
    await expect(page.locator('.editor-pane')).toBeHidden();

    // Tap Files: the editor replaces the diagram.
    await tab('files').click();
    await expect(page.locator('.editor-pane')).toBeVisible();
    await expect(page.locator('.diagram-pane')).toBeHidden();
    const shot = async (name: string) => {
      const path = testInfo.outputPath(`phone-${name}-${lang}.png`);
      await page.screenshot({ path });
      await testInfo.attach(`phone-${name}-${lang}`, { path, contentType: 'image/png' });
    };
    await shot('files');

    // The arrow keys walk the tab list: Files → Cluster → Terminal.
    await tab('files').focus();
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight');
    await expect(tab('terminal')).toBeFocused();
    await expect(tab('terminal')).toHaveAttribute('aria-selected', 'true');
    await expect(page.locator('.terminal-pane')).toBeVisible();
    await cluster.run('kubectl get nodes');
    await cluster.expectOutput(/node-1\s+Ready/);
    await shot('terminal');

    // Controls, and back to the diagram.
    await tab('controls').click();
    await expect(page.getByTestId('switch-power-node-3')).toBeVisible();
    await shot('controls');
    await tab('cluster').click();
    await expect(page.locator('.diagram-pane')).toBeVisible();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    expect(cluster.errors).toEqual([]);
  });
}

test('wide screens show every pane and no tabs', async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 720 });
  const cluster = new ClusterPage(page);
  await cluster.goto();
  await expect(page.getByTestId('pane-tabs')).toBeHidden();
  for (const pane of ['.editor-pane', '.diagram-pane', '.terminal-pane', '.side-pane']) {
    await expect(page.locator(pane)).toBeVisible();
  }
});
