// Playwright runs the specs in tests/ against the release build (../dist), served by
// serve-dist.mjs on 127.0.0.1:$E2E_PORT, in Debian's Chromium (see chromium.mjs).
import { defineConfig } from '@playwright/test';
import { chromiumArgs, chromiumPath } from './chromium.mjs';

const port = Number(process.env.E2E_PORT ?? 4173);

export default defineConfig({
  testDir: './tests',
  forbidOnly: !!process.env.CI,
  retries: 0,
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
