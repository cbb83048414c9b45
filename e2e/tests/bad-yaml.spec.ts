// Bad input is shown where it is: a YAML syntax error and a field the apiserver rejects.
import { expect, test } from '@playwright/test';
import { CLUSTER_TIMEOUT, ClusterPage } from './fixtures/cluster-page';

test('a YAML syntax error is marked at its line and kubectl reports it', async ({ page }) => {
  const cluster = new ClusterPage(page);
  await cluster.goto();
  const text = await cluster.fileText();
  // Line 8 loses an indent: the mapping on line 9 no longer parses.
  await cluster.setFileText(text.replace('  replicas: 3', ' replicas: 3'));

  await expect(cluster.editorErrors).toHaveCount(1);
  await expect(cluster.editorErrors.first()).toHaveAttribute('data-line', '9');
  await expect(cluster.editorErrors.first()).toContainText('mapping values are not allowed in this context');
  await expect(cluster.gutterErrors).toHaveText(['9']);

  await cluster.apply.click();
  await cluster.expectOutput('error: error parsing nginx-deploy.yaml: error converting YAML to JSON: yaml: line 9');
  await expect(cluster.pods).toHaveCount(0);
  expect(cluster.errors).toEqual([]);
});

test('an unknown field is marked where the apiserver found it', async ({ page }) => {
  const cluster = new ClusterPage(page);
  await cluster.goto();
  await cluster.setFileText((await cluster.fileText()).replace('replicas: 3', 'replica: 3'));
  await expect(cluster.editorErrors).toHaveCount(0);

  await cluster.apply.click();

  await cluster.expectOutput('strict decoding error: unknown field "spec.replica"', CLUSTER_TIMEOUT);
  await expect(cluster.editorErrors).toHaveCount(1);
  await expect(cluster.editorErrors.first()).toHaveAttribute('data-line', '8');
  await expect(cluster.editorErrors.first()).toHaveAttribute('data-column', '3');
  await expect(cluster.editorErrors.first()).toContainText('unknown field "spec.replica"');
  expect(cluster.errors).toEqual([]);
});
