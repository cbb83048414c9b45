// The terminal: command history with the arrow keys, Ctrl-C stops a watch, help.
import { expect, test } from '@playwright/test';
import { ClusterPage } from './fixtures/cluster-page';

test('history, a watch stopped with Ctrl-C, and kubectl get nodes', async ({ page }) => {
  const cluster = new ClusterPage(page);
  await cluster.goto();

  await cluster.run('kubectl get nodes');
  await cluster.expectOutput(/^node-3\s+Ready/);
  await expect(cluster.terminalLines.filter({ hasText: /^node-\d\s+Ready/ })).toHaveCount(3);

  await cluster.run('kubectl get pods -w');
  await expect(page.getByTestId('terminal-status')).toContainText('kubectl get pods -w');
  await cluster.terminalInput.press('Control+c');
  await cluster.expectOutput('^C');
  await expect(page.getByTestId('terminal-status')).not.toContainText('kubectl get pods -w');

  await cluster.terminalInput.press('ArrowUp');
  await expect(cluster.terminalInput).toHaveValue('kubectl get pods -w');
  await cluster.terminalInput.press('ArrowUp');
  await expect(cluster.terminalInput).toHaveValue('kubectl get nodes');
  await cluster.terminalInput.press('ArrowDown');
  await cluster.terminalInput.press('ArrowDown');
  await expect(cluster.terminalInput).toHaveValue('');

  await cluster.run('nonsense');
  await cluster.expectOutput('bash: nonsense: command not found');
  expect(cluster.errors).toEqual([]);
});
