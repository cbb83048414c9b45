// A learner takes a lesson (design §6.20): opens it from the Lessons list with the
// keyboard, reads why a check does not hold yet, asks for a hint, types the commands, and
// watches the steps complete; the progress survives a reload; a lesson's link opens it.
import { expect, test } from '@playwright/test';
import { CLUSTER_TIMEOUT, ClusterPage } from './fixtures/cluster-page';

const steps = (page) => page.getByTestId('lesson-step');

test('a learner completes steps of a lesson by typing, and a failing check explains itself', async ({ page }) => {
  const cluster = new ClusterPage(page);
  await cluster.goto();
  // The keyboard way in: focus the Lessons button, open its list, pick the lesson.
  await page.getByTestId('lessons').focus();
  await page.keyboard.press('Enter');
  const list = page.getByTestId('lessons-list');
  await expect(list).toBeVisible();
  const item = list.locator('[data-lesson=lesson-self-healing]');
  await expect(item).toContainText('not started');
  await item.focus();
  await page.keyboard.press('Enter');
  await expect(list).toHaveCount(0);

  const lesson = page.getByTestId('lesson');
  await expect(lesson).toContainText('Self-healing');
  await expect(steps(page).first()).toHaveAttribute('data-state', 'current');
  const check = page.getByTestId('lesson-check');
  await expect(check).toContainText('Not yet: 0 of 3 pods app=web are Ready');

  // Hints come one at a time; the solution stays hidden until asked for.
  await expect(page.getByTestId('lesson-hint')).toHaveCount(0);
  await page.getByTestId('lesson-hint-button').click();
  await expect(page.getByTestId('lesson-hint')).toHaveCount(1);
  await expect(page.getByTestId('lesson-solution')).toHaveCount(0);
  await page.getByTestId('lesson-solution-button').click();
  await expect(page.getByTestId('lesson-solution')).toContainText('kubectl apply -f web.yaml');

  await cluster.fast();
  await cluster.run('kubectl apply -f web.yaml');
  await expect(steps(page).nth(0)).toHaveAttribute('data-state', 'done', { timeout: CLUSTER_TIMEOUT });
  await expect(steps(page).nth(0)).toContainText('done at');
  await expect(page.getByTestId('lesson-progress')).toHaveText('1/5');
  // The next step's hints and solution start closed.
  await expect(page.getByTestId('lesson-solution')).toHaveCount(0);
  await expect(check).toContainText('run `kubectl delete pod …` (not run in this step yet)');

  await cluster.run('kubectl delete pod -l app=web');
  await expect(steps(page).nth(1)).toHaveAttribute('data-state', 'done', { timeout: CLUSTER_TIMEOUT });

  // A wrong answer: four replicas, not five. The check says exactly what is off.
  await cluster.run('kubectl scale deployment web --replicas=4');
  await expect(check).toContainText('Deployment web: {.spec.replicas} is "4", not "5"', { timeout: CLUSTER_TIMEOUT });
  await expect(steps(page).nth(2)).toHaveAttribute('data-state', 'current');
  await cluster.run('kubectl scale deployment web --replicas=5');
  await expect(steps(page).nth(2)).toHaveAttribute('data-state', 'done', { timeout: CLUSTER_TIMEOUT });
  await expect(page.getByTestId('lesson-progress')).toHaveText('3/5');

  // The progress is kept: after a reload the list shows it.
  await page.reload();
  await expect(cluster.diagram).toBeVisible();
  await page.getByTestId('lessons').click();
  await expect(page.locator('[data-lesson=lesson-self-healing]')).toContainText('3/5');
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('lessons-list')).toHaveCount(0);
  expect(cluster.errors).toEqual([]);
});

test('a lesson link opens the lesson, in 简体中文 too', async ({ page }) => {
  await page.addInitScript(() => localStorage.setItem('kubeloop.lang', 'zh-CN'));
  const cluster = new ClusterPage(page);
  await cluster.goto('/#lesson=lesson-scheduler-choice');
  const lesson = page.getByTestId('lesson');
  await expect(lesson).toContainText('调度器的选择');
  await expect(page.getByTestId('lesson-check')).toContainText('还没有：');
  await expect(page.getByTestId('lesson-text')).toContainText('kube-scheduler');
  await cluster.goto('/#lesson=no-such-lesson');
  await expect(cluster.banner).toBeVisible();
  await expect(cluster.banner).toContainText('no-such-lesson');
  expect(cluster.errors).toEqual([]);
});

for (const size of [
  { name: '1440x900', width: 1440, height: 900 },
  { name: '1280x720', width: 1280, height: 720 },
  { name: 'phone-390x844', width: 390, height: 844 },
]) {
  for (const lang of ['en', 'zh-CN']) {
    test(`the lesson panel at ${size.name} (${lang})`, async ({ page }, testInfo) => {
      await page.setViewportSize({ width: size.width, height: size.height });
      await page.addInitScript((l) => localStorage.setItem('kubeloop.lang', l), lang);
      const cluster = new ClusterPage(page);
      // On a phone the lesson's tab replaces the diagram: wait for the lesson, not it.
      await page.goto('/#lesson=lesson-self-healing');
      const lesson = page.getByTestId('lesson');
      await expect(lesson).toBeAttached();
      if (size.width < 760) {
        // On a phone the lesson opens on the Controls tab, which holds its steps.
        await expect(page.locator('[data-pane-tab=controls]')).toHaveAttribute('aria-selected', 'true');
      }
      await lesson.scrollIntoViewIfNeeded();
      await expect(lesson).toBeVisible();
      await page.getByTestId('lesson-hint-button').click();
      const box = await lesson.boundingBox();
      expect(box!.width).toBeGreaterThan(250);
      expect(box!.x + box!.width).toBeLessThanOrEqual(size.width + 1);
      const shot = testInfo.outputPath(`lesson-${size.name}-${lang}.png`);
      await page.screenshot({ path: shot });
      await testInfo.attach(`lesson-${size.name}-${lang}`, { path: shot, contentType: 'image/png' });
      expect(cluster.errors).toEqual([]);
    });
  }
}
