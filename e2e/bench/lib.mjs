// Shared by the page benchmarks: a free port, serve-dist.mjs over ../dist, Debian Chromium.
import { spawn } from 'node:child_process';
import { deflateRawSync } from 'node:zlib';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { chromium } from '@playwright/test';
import { chromiumArgs, chromiumPath } from '../chromium.mjs';

export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function waitForServer(url, server) {
  for (let i = 0; i < 100; i++) {
    if (server.exitCode !== null) throw new Error(`serve-dist exited with ${server.exitCode}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`server at ${url} did not start`);
}

/** Serves ../dist and starts headless Chromium; calls `body(browser, url)`, then cleans up. */
export async function withPage(body) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  const server = spawn(process.execPath, [fileURLToPath(new URL('../serve-dist.mjs', import.meta.url)), String(port)], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  let browser;
  try {
    await waitForServer(url, server);
    browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs, headless: true });
    return await body(browser, url);
  } finally {
    await browser?.close();
    server.kill();
  }
}

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** The p-th percentile (0–100) by nearest rank. */
export const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
};

export const round = (x) => Math.round(x * 10) / 10;

/** The number after `--name` on the command line, else `dflt`. */
export function numberArg(name, dflt) {
  const args = process.argv.slice(2);
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : dflt;
}

/** The share-link fragment (`#s=…`) of a scenario of N worker nodes and no workload. */
export function nodesLink(nodes) {
  const scenario = `apiVersion: kubeloop.dev/v1alpha1
kind: Scenario
metadata:
  name: nodes-${nodes}
spec:
  seed: 1
  nodes:
  - namePrefix: node-
    count: ${nodes}
`;
  return `#s=${deflateRawSync(Buffer.from(scenario)).toString('base64url')}`;
}
