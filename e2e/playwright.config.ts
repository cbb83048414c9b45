// Playwright runs the specs in tests/ against the release build (../dist), served by
// serve-dist.mjs on 127.0.0.1:$E2E_PORT, in Debian's Chromium (see chromium.mjs).
import { defineConfig } from '@playwright/test';
import { chromiumArgs, chromiumPath } from './chromium.mjs';

const port = Number(process.env.E2E_PORT ?? 4173);

export default defineConfig({
  testDir: './tests',
  forbidOnly: !!process.env.CI,
  // Two workers share CI's two cores with the page's own engine: a journey that measures
  // responsiveness (never-freezes) can miss its bound when the other worker is busy, so CI
  // tries a failed journey once more; a second failure fails the run.
  retries: process.env.CI ? 1 : 0,
  // CI's journeys run 3–5× slower than on a quiet machine (the share-link journey: 7 s
  // alone, 36 s there), so a journey gets 60 s there instead of the 30 s default.
  timeout: process.env.CI ? 60_000 : 30_000,
  workers: 2,
  reporter: [['list']],
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    browserName: 'chromium',
    headless: true,
    launchOptions: { executablePath: chromiumPath, args: chromiumArgs },
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
  },
  webServer: {
    command: `node serve-dist.mjs ${port}`,
    url: `http://127.0.0.1:${port}/`,
    // Never reuse: another worktree's server on the same port would serve another build.
    reuseExistingServer: false,
    timeout: 30_000,
  },
});
