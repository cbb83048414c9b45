// The terminal as a learner uses it with a running app: Tab completes a command and a
// pod's name, `kubectl exec -it POD -- sh` opens the container's shell (its prompt, its
// directory kept between lines) until `exit`, and a background port-forward lets the
// terminal's curl reach the pods.
import { expect, test } from '@playwright/test';
import { CLUSTER_TIMEOUT, ClusterPage } from './fixtures/cluster-page';

test('Tab completion, an interactive container shell, and curl through port-forward', async ({ page }, testInfo) => {
  const cluster = new ClusterPage(page);
  await cluster.goto();
  await cluster.fast();
  await cluster.applyAndWaitForReady();
  const [pod] = await cluster.podNames();

  // Tab completes the subcommand, then the pod's name from the cluster.
  await cluster.terminalInput.fill('kubectl desc');
  await cluster.terminalInput.press('Tab');
  await expect(cluster.terminalInput).toHaveValue('kubectl describe ');
  await cluster.terminalInput.fill(`kubectl exec -it ${pod.slice(0, -3)}`);
  await cluster.terminalInput.press('Tab');
  await expect(cluster.terminalInput).toHaveValue(`kubectl exec -it ${pod} `);

  // The container's shell: bash in the nginx image, its prompt, state kept, then exit.
  await cluster.terminalInput.press('End');
  await cluster.terminalInput.type('-- bash');
  await cluster.terminalInput.press('Enter');
  const ps1 = page.locator('.term-input .ps1');
  await expect(ps1).toHaveText(`root@${pod}:/#`, { timeout: CLUSTER_TIMEOUT });
  await cluster.run('cd /usr/share/nginx/html');
  await cluster.run('echo "<h1>made in the shell</h1>" > index.html; pwd; ls');
  await cluster.expectOutput('/usr/share/nginx/html');
  await cluster.expectOutput('50x.html');
  const shot = testInfo.outputPath('container-shell-1280x720-en.png');
  await page.getByTestId('terminal-input').scrollIntoViewIfNeeded();
  await page.screenshot({ path: shot });
  await testInfo.attach('container-shell', { path: shot, contentType: 'image/png' });
  await cluster.run('exit');
  await expect(ps1).toHaveText('$');

  // A background port-forward to that pod, then the terminal's own curl.
  await cluster.run(`kubectl port-forward pod/${pod} 8080:80 &`);
  await cluster.expectOutput('Forwarding from 127.0.0.1:8080 -> 80');
  await cluster.run('curl -s localhost:8080');
  await cluster.expectOutput('made in the shell');
  expect(cluster.errors).toEqual([]);
});
