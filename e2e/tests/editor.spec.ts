// The editor as a learner uses it: CodeMirror with the YAML's problems marked inline at
// line:column, Ctrl+Enter applies, Esc then Tab leaves; files as tabs (add, rename,
// delete and undo) that kubectl -f reads by their names; the terminal's copy button.
import { expect, test, type Page } from '@playwright/test';
import { CLUSTER_TIMEOUT, ClusterPage } from './fixtures/cluster-page';

// Line 9 is indented one space too far: it no longer parses.
const BROKEN = `apiVersion: v1
kind: Pod
metadata:
  name: solo
spec:
  containers:
  - name: web
    image: nginx:1.27
     imagePullPolicy: IfNotPresent
`;

async function cursor(cluster: ClusterPage) {
  return cluster.editor.evaluate((el) => (el as HTMLElement & { kubeloop: { cursor(): { line: number; column: number } } }).kubeloop.cursor());
}

async function addFile(page: Page, name: string) {
  await page.getByTestId('file-add').click();
  const field = page.getByTestId('file-name-input');
  await expect(field).toBeFocused();
  await page.keyboard.type(name);
  await page.keyboard.press('Enter');
}

test('a mistake is marked at its line:column, fixed from the keyboard and applied with Ctrl+Enter', async ({ page }) => {
  const cluster = new ClusterPage(page);
  await cluster.goto();
  await cluster.fast();
  await addFile(page, 'pod.yaml');
  await expect(page.getByTestId('file-tab').filter({ hasText: 'pod.yaml' })).toHaveClass(/active/);
  await cluster.setFileText(BROKEN);

  // The problems list, the line number and the squiggle all point at line 9.
  await expect(cluster.editorErrors).toHaveCount(1);
  const problem = cluster.editorErrors.first();
  await expect(problem).toHaveAttribute('data-line', '9');
  await expect(problem).toContainText('mapping values are not allowed in this context');
  const column = Number(await problem.getAttribute('data-column'));
  await expect(cluster.gutterErrors).toHaveText(['9']);
  const squiggle = page.locator('[data-testid=editor] .cm-line .cm-lintRange-error');
  await expect(squiggle).toHaveCount(1);
  const squiggleLine = await squiggle.evaluate((el) => {
    const line = el.closest('.cm-line')!;
    return [...line.parentElement!.querySelectorAll(':scope > .cm-line')].indexOf(line) + 1;
  });
  expect(squiggleLine).toBe(9);
  await expect(page.locator('[data-testid=editor] .cm-lint-marker-error')).toHaveCount(1);

  // Clicking the problem puts the cursor there; Home, Backspace takes the space out.
  await problem.click();
  await expect(cluster.editor).toBeFocused();
  expect(await cursor(cluster)).toEqual({ line: 9, column });
  await page.keyboard.press('Home');
  await page.keyboard.press('Backspace');
  await expect(cluster.editorErrors).toHaveCount(0);
  expect((await cluster.fileText()).split('\n')[8]).toBe('    imagePullPolicy: IfNotPresent');
  await expect(cluster.gutterErrors).toHaveCount(0);

  // Undo brings the mistake back, redo fixes it again (the history is this file's).
  await page.keyboard.press('ControlOrMeta+z');
  await expect(cluster.editorErrors).toHaveCount(1);
  await page.keyboard.press('Control+y'); // redo
  await expect(cluster.editorErrors).toHaveCount(0);
  // Ctrl+Shift+Z redoes too, as in most editors.
  await page.keyboard.press('ControlOrMeta+z');
  await expect(cluster.editorErrors).toHaveCount(1);
  await page.keyboard.press('ControlOrMeta+Shift+Z');
  await expect(cluster.editorErrors).toHaveCount(0);

  await page.keyboard.press('Control+Enter');
  await cluster.expectOutput('kubectl apply -f pod.yaml');
  await cluster.expectOutput('pod/solo created');

  // Esc then Tab leaves the editor.
  await cluster.editor.click();
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('editor-keys')).toContainText('Tab now moves');
  await page.keyboard.press('Tab');
  await expect(cluster.editor).not.toBeFocused();
  expect(cluster.errors).toEqual([]);
});

test('files are added, renamed and deleted as tabs, and kubectl reads the new names', async ({ page, context }) => {
  // About 20 s on a quiet machine; a loaded 2-core CI machine took past the 30 s default.
  test.setTimeout(90_000);
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  // What the page hands the clipboard (reading the clipboard back needs a focused window).
  await page.addInitScript(() => {
    const write = navigator.clipboard.writeText.bind(navigator.clipboard);
    navigator.clipboard.writeText = (text: string) => {
      (window as unknown as { copied: string }).copied = text;
      return write(text);
    };
  });
  const cluster = new ClusterPage(page);
  await cluster.goto();
  await cluster.fast();
  const tabs = page.getByTestId('file-tab');
  await addFile(page, 'pod.yaml');
  await cluster.setFileText(BROKEN.replace('     imagePullPolicy', '    imagePullPolicy'));
  await expect(tabs).toHaveText(['nginx-deploy.yaml', 'pod.yaml']);

  // A taken name and a name with a slash are refused, with a message, and nothing changes.
  await addFile(page, 'nginx-deploy.yaml');
  await expect(page.getByTestId('file-error')).toContainText('A file already has this name: nginx-deploy.yaml');
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('file-name-input')).toHaveCount(0);

  // Double-click renames.
  await tabs.filter({ hasText: 'pod.yaml' }).dblclick();
  const field = page.getByTestId('file-name-input');
  await expect(field).toBeFocused();
  await field.fill('pods/solo.yaml');
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('file-error')).toContainText('A file name cannot contain /.');
  await field.fill('solo.yaml');
  await page.keyboard.press('Enter');
  await expect(tabs).toHaveText(['nginx-deploy.yaml', 'solo.yaml']);
  await expect(cluster.editor).toHaveAttribute('data-file', 'solo.yaml');

  await cluster.run('kubectl apply -f solo.yaml');
  await cluster.expectOutput('pod/solo created');
  await cluster.run('kubectl apply -f pod.yaml');
  await cluster.expectOutput('error: the path "pod.yaml" does not exist');

  // Delete asks first; Undo brings the file back.
  await page.getByTestId('file-delete').click();
  await expect(page.getByTestId('file-confirm')).toContainText('Delete this file? solo.yaml');
  await page.getByTestId('file-delete-confirm').click();
  await expect(tabs).toHaveText(['nginx-deploy.yaml']);
  await expect(cluster.editor).toHaveAttribute('data-file', 'nginx-deploy.yaml');
  await cluster.run('kubectl apply -f solo.yaml');
  await cluster.expectOutput('error: the path "solo.yaml" does not exist');
  await page.getByTestId('file-undo').click();
  await expect(tabs).toHaveText(['nginx-deploy.yaml', 'solo.yaml']);
  await cluster.run('kubectl apply -f solo.yaml');
  await cluster.expectOutput('pod/solo unchanged');

  // The copy button copies the scrollback as it reads.
  await page.getByTestId('terminal-copy').click();
  await expect(page.getByTestId('terminal-copy')).toHaveText('Copied');
  const copied = await page.evaluate(() => (window as unknown as { copied: string }).copied);
  expect(copied).toContain('$ kubectl apply -f solo.yaml');
  expect(copied).toContain('pod/solo unchanged');

  // A reload keeps the renamed file (it is saved with the scenario).
  await page.reload();
  await expect(tabs).toHaveText(['nginx-deploy.yaml', 'solo.yaml'], { timeout: CLUSTER_TIMEOUT });

  expect(cluster.errors).toEqual([]);
});

test('terminal output wraps and curl -v prints its heads around the body', async ({ page }) => {
  const cluster = new ClusterPage(page);
  await cluster.goto();
  await cluster.fast();
  await cluster.applyAndWaitForReady(3);
  await cluster.run('kubectl expose deployment nginx --port=80');
  await cluster.expectOutput('service/nginx exposed');
  await cluster.run('kubectl get svc nginx');
  const row = cluster.terminalLines.filter({ hasText: /^nginx\s+ClusterIP/ }).last();
  await expect(row).toBeVisible({ timeout: CLUSTER_TIMEOUT });
  const ip = (await row.textContent())!.split(/\s+/)[2];
  await cluster.run(`ssh node-1 curl -v http://${ip}/`);
  await cluster.expectOutput(`* Connection #0 to host ${ip} left intact`);
  const lines = await cluster.terminalLines.allTextContents();
  const at = lines.lastIndexOf(`*   Trying ${ip}:80...`);
  const tail = lines.slice(at);
  const body = tail.indexOf('<title>Welcome to nginx!</title>');
  const head = tail.indexOf('< HTTP/1.1 200 OK');
  const end = tail.indexOf(`* Connection #0 to host ${ip} left intact`);
  expect(head).toBeGreaterThan(0);
  expect(body).toBeGreaterThan(head);
  expect(end).toBeGreaterThan(body);
  // The heads are stderr, the body stdout.
  const kinds = await cluster.terminalLines.evaluateAll((els, ip) => {
    const i = els.map((e) => e.textContent).lastIndexOf(`*   Trying ${ip}:80...`);
    return els.slice(i).map((e) => e.className);
  }, ip);
  expect(kinds[head]).toContain('err');
  expect(kinds[body]).toContain('out');
  // A long line wraps instead of running off the pane.
  await cluster.run('kubectl get deploy nginx -o jsonpath={.metadata.annotations}');
  await cluster.expectOutput('last-applied-configuration');
  const wide = await cluster.terminalOutput.evaluate((el) => el.scrollWidth <= el.clientWidth + 1);
  expect(wide).toBe(true);
  expect(cluster.errors).toEqual([]);
});

const sizes = [
  { name: 'desktop-1440x900', width: 1440, height: 900 },
  { name: 'laptop-1280x720', width: 1280, height: 720 },
  { name: 'phone-390x844', width: 390, height: 844 },
];
for (const lang of ['en', 'zh-CN']) {
  test(`the editor with a problem marked, at three sizes (${lang})`, async ({ page }, testInfo) => {
    await page.addInitScript((l) => localStorage.setItem('kubeloop.lang', l), lang);
    const cluster = new ClusterPage(page);
    await cluster.goto();
    await page.getByTestId('play-pause').click();
    await addFile(page, 'pod.yaml');
    await cluster.setFileText(BROKEN);
    await expect(cluster.editorErrors).toHaveCount(1);
    for (const size of sizes) {
      await page.setViewportSize({ width: size.width, height: size.height });
      if (size.width <= 760) await page.locator('[data-pane-tab=files]').click();
      await expect(cluster.gutterErrors).toHaveText(['9']);
      const shot = testInfo.outputPath(`editor-${size.name}-${lang}.png`);
      await page.screenshot({ path: shot });
      await testInfo.attach(`editor-${size.name}-${lang}`, { path: shot, contentType: 'image/png' });
    }
    expect(cluster.errors).toEqual([]);
  });
}
