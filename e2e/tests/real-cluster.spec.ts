// The way out to a real cluster and the way in (design §6.21): the nginx scenario
// downloads as a kind directory with the expected files; a real cluster's list, uploaded,
// becomes the cluster on the page, with what was skipped and refused listed.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { ClusterPage } from './fixtures/cluster-page';

test('the nginx scenario downloads as a kind directory', async ({ page }, testInfo) => {
  const cluster = new ClusterPage(page);
  await cluster.goto();
  await page.getByTestId('examples').selectOption('nginx-basic');
  await page.getByTestId('real-cluster').click();
  const pop = page.getByTestId('real-cluster-pop');
  await expect(pop).toBeVisible();
  await expect(page.getByTestId('export-commands')).toContainText('kind create cluster --name nginx-basic --config kind-config.yaml');
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-kind').click()]);
  expect(download.suggestedFilename()).toBe('nginx-basic-kind.tar');
  const tar = testInfo.outputPath('nginx-basic-kind.tar');
  await download.saveAs(tar);
  const files = execFileSync('tar', ['tf', tar], { encoding: 'utf8' }).trim().split('\n').sort();
  expect(files).toEqual(
    expect.arrayContaining([
      'nginx-basic/README.md',
      'nginx-basic/kind-config.yaml',
      'nginx-basic/manifests/nginx-deploy.yaml',
      'nginx-basic/run.sh',
    ]),
  );
  const dir = testInfo.outputPath('x');
  execFileSync('mkdir', ['-p', dir]);
  execFileSync('tar', ['xf', tar, '-C', dir]);
  const config = execFileSync('cat', [path.join(dir, 'nginx-basic/kind-config.yaml')], { encoding: 'utf8' });
  expect(config).toContain('apiVersion: kind.x-k8s.io/v1alpha4');
  expect(config).toContain('role: control-plane');
  const script = execFileSync('cat', [path.join(dir, 'nginx-basic/run.sh')], { encoding: 'utf8' });
  expect(script).toContain('kubectl apply -f nginx-deploy.yaml');
  expect(script).toContain('kubectl expose deployment nginx --port=80');
  // Escape closes the panel.
  await page.keyboard.press('Escape');
  await expect(pop).toHaveCount(0);
  expect(cluster.errors).toEqual([]);
});

test('a real cluster list, uploaded, becomes the page cluster', async ({ page }, testInfo) => {
  const cluster = new ClusterPage(page);
  await cluster.goto();
  await page.getByTestId('real-cluster').click();
  // Nothing pasted: a clear refusal, nothing replaced.
  await page.getByTestId('import-button').click();
  await expect(page.getByTestId('import-error')).toContainText('nothing to import');

  const list = path.join(__dirname, '../../crates/sim/src/import/testdata/cluster-list.yaml');
  await page.getByTestId('import-file').setInputFiles(list);
  await expect(page.getByTestId('import-text')).toHaveValue(/kind: List/);
  await page.getByTestId('import-button').click();
  const report = page.getByTestId('import-report');
  await expect(report).toContainText('Imported 3 nodes');
  await expect(page.getByTestId('import-skipped')).toBeVisible();
  await expect(page.getByTestId('import-errors')).toContainText('broken');
  await expect(page.getByTestId('import-notices')).toContainText('Secret');
  // The diagram draws the real cluster's nodes.
  await expect(cluster.nodes.and(page.locator('[data-name=kind-worker2]'))).toHaveCount(1);
  const shot = testInfo.outputPath('import-1440.png');
  await page.screenshot({ path: shot });
  await testInfo.attach('import', { path: shot, contentType: 'image/png' });
  expect(cluster.errors).toEqual([]);
});
