// Every pane scrolls and every control can be reached at 1280×720 and on a phone, in
// English and 简体中文; text meets 4.5:1 contrast. Screenshots are kept as artifacts.
import { expect, test, type Page } from '@playwright/test';
import { ClusterPage } from './fixtures/cluster-page';

const sizes = [
  { name: 'desktop-1440x900', width: 1440, height: 900 },
  { name: 'laptop-1280x720', width: 1280, height: 720 },
  { name: 'phone-390x844', width: 390, height: 844 },
];

/** Every enabled control on the page, as a description, that cannot be brought into view and clicked. */
async function unreachable(page: Page): Promise<string[]> {
  const controls = page.locator('button:visible, select:visible, input:visible, textarea:visible, [role=switch]:visible');
  const n = await controls.count();
  const bad: string[] = [];
  for (let i = 0; i < n; i++) {
    const c = controls.nth(i);
    await c.scrollIntoViewIfNeeded();
    const ok = await c.evaluate((el) => {
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) return true; // not drawn (e.g. hidden by a closed panel)
      const x = Math.min(Math.max(r.left + r.width / 2, 0), innerWidth - 1);
      const y = Math.min(Math.max(r.top + r.height / 2, 0), innerHeight - 1);
      const hit = document.elementFromPoint(x, y);
      return hit === el || el.contains(hit) || (hit !== null && hit.contains(el));
    });
    if (!ok) bad.push(await c.evaluate((el) => `${el.tagName} ${el.getAttribute('data-testid') ?? el.textContent?.trim().slice(0, 30)}`));
  }
  return bad;
}

for (const size of sizes) {
  for (const lang of ['en', 'zh-CN']) {
    test(`every control is reachable at ${size.name} (${lang})`, async ({ page }, testInfo) => {
      await page.setViewportSize({ width: size.width, height: size.height });
      await page.addInitScript((l) => localStorage.setItem('kubeloop.lang', l), lang);
      const cluster = new ClusterPage(page);
      await cluster.goto();
      await page.getByTestId('play-pause').click();
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(size.width);
      expect(await unreachable(page)).toEqual([]);
      // The last control of the side column is reached by scrolling it (on a phone,
      // after opening the Controls tab).
      if (size.width <= 760) await page.locator('[data-pane-tab=controls]').click();
      const last = page.getByTestId('switch-power-node-3');
      await last.scrollIntoViewIfNeeded();
      await last.click();
      await expect(last).toHaveAttribute('aria-checked', 'false');
      await page.evaluate(() => window.scrollTo(0, 0));
      if (size.width <= 760) await page.locator('[data-pane-tab=cluster]').click();
      const shot = testInfo.outputPath(`${size.name}-${lang}.png`);
      await page.screenshot({ path: shot });
      await testInfo.attach(`${size.name}-${lang}`, { path: shot, contentType: 'image/png' });
      expect(cluster.errors).toEqual([]);
    });
  }
}

test('text has at least 4.5:1 contrast against its background', async ({ page }) => {
  const cluster = new ClusterPage(page);
  await cluster.goto();
  await cluster.run('kubectl get nodes');
  await cluster.expectOutput('node-1');
  const low = await page.evaluate(() => {
    const rgb = (s: string) => (s.match(/[\d.]+/g) ?? []).map(Number);
    const lum = ([r, g, b]: number[]) => {
      const f = (c: number) => ((c /= 255) <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
      return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
    };
    const background = (el: Element | null): number[] => {
      for (; el; el = el.parentElement) {
        const c = rgb(getComputedStyle(el).backgroundColor);
        if (c.length === 3 || (c.length === 4 && c[3] > 0.9)) return c.slice(0, 3);
      }
      return [10, 15, 29]; // the page's --bg
    };
    const out: string[] = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.parentElement;
      if (!el || !n.textContent?.trim() || el.closest('svg, option, [aria-hidden=true]')) continue;
      const style = getComputedStyle(el);
      if (style.visibility === 'hidden' || el.getClientRects().length === 0) continue;
      if (style.webkitTextFillColor && rgb(style.webkitTextFillColor)[3] === 0) continue; // the editor's transparent input
      const [a, b] = [lum(rgb(style.color)), lum(background(el))].sort((x, y) => y - x);
      const ratio = (a + 0.05) / (b + 0.05);
      if (ratio < 4.5) out.push(`${ratio.toFixed(2)} ${el.className || el.tagName}: ${n.textContent.trim().slice(0, 30)}`);
    }
    return out;
  });
  expect(low).toEqual([]);
});
