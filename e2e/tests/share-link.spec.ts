// Share writes #s=… and opens the same scenario in a fresh browser; a bad link keeps the work.
import { expect, test } from '@playwright/test';
import { ClusterPage } from './fixtures/cluster-page';

test('a shared link opens the same scenario in a new page', async ({ page, browser }) => {
  const cluster = new ClusterPage(page);
  await cluster.goto();
  const edited = (await cluster.fileText()).replace('replicas: 3', 'replicas: 4');
  await cluster.setFileText(edited);

  await page.getByTestId('share').click();
  const url = await page.getByTestId('share-url').inputValue();
  expect(url).toMatch(/#s=[A-Za-z0-9_-]+$/);
  expect(page.url()).toBe(url);

  // A new context: nothing in localStorage, so only the link can carry the edit.
  const other = await browser.newContext();
  const second = new ClusterPage(await other.newPage());
  await second.goto(url);
  await second.expectFileText(edited);
  await expect(second.banner).toHaveCount(0);
  expect(second.errors).toEqual([]);
  await other.close();
  expect(cluster.errors).toEqual([]);
});

test('a damaged link shows an error and keeps the saved work', async ({ page }) => {
  const cluster = new ClusterPage(page);
  await cluster.goto();
  const mine = (await cluster.fileText()).replace('replicas: 3', 'replicas: 7');
  await cluster.setFileText(mine);

  await cluster.goto('/#s=this-is-not-a-scenario!');
  await expect(cluster.banner).toBeVisible();
  await expect(cluster.banner).toContainText('could not be opened');
  await cluster.expectFileText(mine);
  await page.getByTestId('banner-dismiss').click();
  await expect(cluster.banner).toHaveCount(0);
});
