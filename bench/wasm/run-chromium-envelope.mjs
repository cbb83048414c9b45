// Times the wasm32 build of the envelope workload in headless Debian Chromium (the
// browser the page runs in), driven by the project's Playwright (e2e/node_modules), as
// run-chromium.mjs does for SchedulingBasic; prints one JSON line like
// `kubeloop bench envelope`, with the wasm memory's size at the end
// (memory.buffer.byteLength).
// Usage: node bench/wasm/run-chromium-envelope.mjs [nodes] [pods]
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const here = new URL(".", import.meta.url).pathname;
const e2e = here + "../../e2e/";
const { chromium } = createRequire(e2e + "package.json")("@playwright/test");
const { chromiumArgs, chromiumPath } = await import(e2e + "chromium.mjs");
const { envelopeLine } = await import("./envelope.mjs");

const nodes = Number(process.argv[2] ?? 1000);
const pods = Number(process.argv[3] ?? 30000);
// BENCH_WASM: another build of the same crate (e.g. with the page's size-optimised profile).
const wasm = readFileSync(process.env.BENCH_WASM ?? here + "target/wasm32-unknown-unknown/release/kubeloop_bench_wasm.wasm");

const browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs, headless: true });
try {
  const page = await browser.newPage();
  page.setDefaultTimeout(0);
  await page.route("http://bench.kubeloop/**", (route) =>
    route.request().url().endsWith(".wasm")
      ? route.fulfill({ body: wasm, contentType: "application/wasm" })
      : route.fulfill({ body: "<!doctype html><title>kubeloop bench</title>", contentType: "text/html" }),
  );
  await page.goto("http://bench.kubeloop/");
  // The same line-building function as node's, as a classic script (runs at once).
  await page.addScriptTag({
    content: readFileSync(here + "envelope.mjs", "utf8").replace("export function envelopeLine", "window.envelopeLine = function"),
  });
  const line = await page.evaluate(async ([nodes, pods, runtime]) => {
    const { instance } = await WebAssembly.instantiateStreaming(fetch("/bench.wasm"), {
      env: { now_ms: () => performance.now() },
    });
    const b = instance.exports;
    const t = performance.now();
    const seconds = b.bench_envelope(nodes, pods);
    const wall = (performance.now() - t) / 1000;
    const line = window.envelopeLine(b, { nodes, pods, seconds, wall, runtime });
    return JSON.stringify(line);
  }, [nodes, pods, `Chromium ${browser.version()} (headless)`]);
  console.log(line);
  process.exitCode = JSON.parse(line).seconds >= 0 ? 0 : 1;
} finally {
  await browser.close();
}
