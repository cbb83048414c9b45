// The labels of messages in flight and the pods' status lines stay off the diagram's
// boxes: a label beside the etcd arrow once covered kube-controller-manager's name, and
// "ContainerCreating" ran out of its chip into the next one.
import { expect, test } from '@playwright/test';
import { ClusterPage } from './fixtures/cluster-page';

type Box = { x: number; y: number; w: number; h: number };
const overlap = (a: Box, b: Box) =>
  Math.max(0, Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x)) *
  Math.max(0, Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y));

test('message labels and pod status lines stay off the boxes they are not about', async ({ page }, testInfo) => {
  test.setTimeout(90_000);
  await page.setViewportSize({ width: 1440, height: 900 });
  const cluster = new ClusterPage(page);
  await cluster.goto();
  await cluster.apply.click();
  await page.getByTestId('play-pause').click();
  await expect(page.getByTestId('play-pause')).toHaveAttribute('aria-pressed', 'false');
  let labelled = 0;
  for (let i = 0; i < 40; i++) {
    await page.getByTestId('step').click();
    const found = await page.evaluate(() => {
      const rect = (e: Element) => {
        const r = e.getBoundingClientRect();
        return { x: r.x, y: r.y, w: r.width, h: r.height };
      };
      const labels = [...document.querySelectorAll('.flight-label')]
        .filter((t) => (t.textContent ?? '').length > 0)
        .map((t) => ({ text: t.textContent, box: rect(t) }));
      const boxes = [...document.querySelectorAll('[data-testid=component] rect, [data-testid=node] > rect')].map(rect);
      return { labels, boxes };
    });
    for (const l of found.labels) {
      labelled++;
      for (const b of found.boxes) {
        expect(overlap(l.box, b), `"${l.text}" over a box at step ${i}`).toBeLessThan(4);
      }
    }
  }
  expect(labelled).toBeGreaterThan(5);

  // The pods are being created: each status line ends inside its chip.
  await page.getByTestId('play-pause').click();
  await expect(cluster.pods).toHaveCount(3, { timeout: 30_000 });
  const spill = await cluster.pods.evaluateAll((pods) =>
    pods.map((p) => {
      const chip = p.querySelector('rect')!.getBoundingClientRect();
      const sub = p.querySelector('.pod-sub')!.getBoundingClientRect();
      return { text: p.querySelector('.pod-sub')!.textContent, over: sub.right - chip.right };
    }),
  );
  for (const s of spill) expect(s.over, `"${s.text}" inside its chip`).toBeLessThanOrEqual(1);
  const shot = testInfo.outputPath('flight-labels.png');
  await page.screenshot({ path: shot });
  await testInfo.attach('flight-labels', { path: shot, contentType: 'image/png' });
  expect(cluster.errors).toEqual([]);
});
