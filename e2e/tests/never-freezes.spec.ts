// Scaling the hundred-nodes example to six hundred pods: the page keeps answering the mouse
// and the keyboard while the engine works in time-boxed slices, and the diagram draws a
// bar of pod states per node instead of hundreds of unreadable chips. While the engine is
// behind, the diagram redraws at most every 400 ms and the panels beside it (the flow
// here) on another frame than the diagram; panels out of sight (the timeline under the
// fold) wait until they are shown or the engine has caught up.
import { expect, test } from '@playwright/test';
import { ClusterPage } from './fixtures/cluster-page';

test('the page stays responsive while a Deployment scales to six hundred pods', async ({ page }, testInfo) => {
  test.setTimeout(240_000);
  await page.addInitScript(() => {
    (window as any).__longTasks = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) (window as any).__longTasks.push(e.duration);
    }).observe({ type: 'longtask' });
    // Frames numbered by a callback that runs first in each frame, with whether the
    // clock said "behind" as the frame began; the redraws seen in each frame.
    const w = window as any;
    w.__frames = { n: 0, start: [] as number[], behind: [] as boolean[], diagram: new Set<number>(), flow: new Set<number>(), timeline: new Set<number>(), tlShown: [] as boolean[], on: false };
    const f = w.__frames;
    // When the frame's callbacks began, as the page's loop measures its 400 ms
    // (performance.now()), not the frame's vsync timestamp: a frame that a long task held
    // back begins its work later than its timestamp says.
    const tick = () => {
      f.n += 1;
      const el = document.querySelector('[data-testid=clock-behind]') as HTMLElement | null;
      f.start[f.n] = performance.now();
      f.behind[f.n] = !!el && !el.hidden;
      f.tlShown[f.n] = !!w.__tlShown;
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
    const watch = (sel: string, into: Set<number>) =>
      new MutationObserver(() => f.on && into.add(f.n)).observe(document.querySelector(sel)!, { childList: true, subtree: true, characterData: true, attributes: true });
    w.__watchRedraws = () => {
      watch('[data-testid=cluster-diagram] .layer-nodes', f.diagram);
      watch('[data-testid=flow]', f.flow);
      watch('[data-testid=timeline-list]', f.timeline);
      // Whether the timeline (under the diagram, in the pane's scroll) can be seen.
      new IntersectionObserver((es) => (w.__tlShown = es[es.length - 1].isIntersecting)).observe(
        document.querySelector('[data-testid=timeline]')!,
      );
      f.on = true;
    };
  });
  const cluster = new ClusterPage(page);
  await cluster.goto();
  await page.getByTestId('examples').selectOption('hundred-nodes');
  await cluster.fast();
  await expect(cluster.nodes).toHaveCount(100);
  await expect(cluster.diagram).toHaveAttribute('data-user-ready', '200', { timeout: 120_000 });
  await expect(page.getByTestId('pod-summary')).toHaveCount(100);
  await expect(cluster.diagram.locator('[data-testid=pod]')).toHaveCount(0);

  const heap = async () => Number(await page.getByTestId('memory').getAttribute('data-mib'));
  const heapAt200 = await heap();
  expect(heapAt200, 'the status line shows the heap in use').toBeGreaterThan(0);
  await page.evaluate(() => ((window as any).__longTasks = []));
  await page.evaluate(() => (window as any).__watchRedraws());
  await cluster.run('kubectl scale deployment web --replicas=600');
  await cluster.expectOutput('deployment.apps/web scaled');
  // While the burst runs, Pause answers at once and stops the clock.
  await expect(cluster.diagram).not.toHaveAttribute('data-user-pods', '200', { timeout: 30_000 });
  const pressed = Date.now();
  await page.getByTestId('play-pause').click();
  await expect(page.getByTestId('play-pause')).toHaveAttribute('aria-pressed', 'false');
  expect(Date.now() - pressed).toBeLessThan(2_000);
  const clock = await page.getByTestId('clock-value').innerText();
  await page.waitForTimeout(300);
  await expect(page.getByTestId('clock-value')).toHaveText(clock);
  await page.keyboard.press('Space');
  await expect(page.getByTestId('play-pause')).toHaveAttribute('aria-pressed', 'true');

  await expect(cluster.diagram).toHaveAttribute('data-user-ready', '600', { timeout: 200_000 });
  // Four hundred more pods, their revisions and Events: the heap in use grows.
  await expect.poll(heap).toBeGreaterThan(heapAt200);
  await expect(page.getByTestId('memory')).toHaveText(/^heap \d+ MiB$/);
  // Frames that began and ended behind (the next began behind too): there the diagram
  // redrew at most every 400 ms (frame starts, so a little slack) and never together
  // with the flow panel.
  const cadence = await page.evaluate(() => {
    const f = (window as any).__frames;
    const behind = (n: number) => f.behind[n] && f.behind[n + 1];
    const diagram = [...f.diagram].filter(behind).sort((a, b) => a - b);
    const gaps = diagram.slice(1).map((n, i) => f.start[n] - f.start[diagram[i]]);
    const both = diagram.filter((n) => f.flow.has(n));
    const flowBehind = [...f.flow].filter(behind).length;
    // Frames that were behind with the timeline out of sight (then and the frame before).
    const hidden = (n: number) => behind(n) && !f.tlShown[n] && !f.tlShown[n - 1];
    const hiddenFrames = f.start.map((_: number, n: number) => n).filter(hidden).length;
    const timelineHidden = [...f.timeline].filter(hidden);
    return { redraws: diagram.length, minGap: Math.min(...gaps), both, flowBehind, hiddenFrames, timelineHidden, timeline: f.timeline.size };
  });
  testInfo.annotations.push({ type: 'redraws while behind', description: JSON.stringify(cadence) });
  expect(cadence.redraws, 'the diagram redraws while behind').toBeGreaterThan(3);
  expect(cadence.minGap).toBeGreaterThan(380);
  expect(cadence.flowBehind, 'the flow redraws while behind').toBeGreaterThan(0);
  expect(cadence.both, 'frames that redrew the diagram and the flow').toEqual([]);
  // The timeline under the fold is not redrawn while the engine is behind; it catches up
  // once the engine has (it did redraw during the run).
  expect(cadence.hiddenFrames, 'frames behind with the timeline out of sight').toBeGreaterThan(0);
  expect(cadence.timelineHidden, 'timeline redraws while behind and out of sight').toEqual([]);
  expect(cadence.timeline).toBeGreaterThan(0);
  const longest = await page.evaluate(() => Math.max(0, ...(window as any).__longTasks));
  testInfo.annotations.push({ type: 'longest task (ms)', description: String(longest) });
  // The benchmark holds the 50 ms target; here a loaded CI machine gets slack.
  expect(longest).toBeLessThan(400);
  const elements = await page.evaluate(() => document.getElementsByTagName('*').length);
  expect(elements).toBeLessThan(3_000);
  const bar = page.locator('[data-testid=pod-summary][data-node=node-1]');
  await expect(bar.locator('title')).toContainText(/node-1: \d+ pods/);

  const shot = testInfo.outputPath('hundred-nodes-600-pods.png');
  await page.screenshot({ path: shot });
  await testInfo.attach('hundred-nodes-600-pods', { path: shot, contentType: 'image/png' });
  expect(cluster.errors).toEqual([]);
});
