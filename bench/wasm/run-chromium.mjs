// Times the wasm32 build of SchedulingBasic in headless Debian Chromium (the browser the
// page runs in), driven by the project's Playwright (e2e/node_modules); prints one JSON
// line like run.mjs. The module is served from memory through a Playwright route, so
// nothing listens on a port and nothing is downloaded.
// Usage: node bench/wasm/run-chromium.mjs [nodes] [initial] [pods]
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const here = new URL(".", import.meta.url).pathname;
const e2e = here + "../../e2e/";
const { chromium } = createRequire(e2e + "package.json")("@playwright/test");
const { chromiumArgs, chromiumPath } = await import(e2e + "chromium.mjs");

const nodes = Number(process.argv[2] ?? 5000);
const initial = Number(process.argv[3] ?? 1000);
const pods = Number(process.argv[4] ?? 10000);
const wasm = readFileSync(here + "target/wasm32-unknown-unknown/release/kubeloop_bench_wasm.wasm");

const browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs, headless: true });
try {
  const page = await browser.newPage();
  await page.route("http://bench.kubeloop/**", (route) =>
    route.request().url().endsWith(".wasm")
      ? route.fulfill({ body: wasm, contentType: "application/wasm" })
      : route.fulfill({ body: "<!doctype html><title>kubeloop bench</title>", contentType: "text/html" }),
  );
  await page.goto("http://bench.kubeloop/");
  const r = await page.evaluate(async ([nodes, initial, pods]) => {
    const { instance } = await WebAssembly.instantiateStreaming(fetch("/bench.wasm"), {
      env: { now_ms: () => performance.now() },
    });
    const b = instance.exports;
    const t = performance.now();
    const rate = b.bench_scheduling(nodes, initial, pods);
    const total = (performance.now() - t) / 1000;
    const placements = BigInt.asUintN(64, b.scheduling_placements()).toString(16).padStart(16, "0");
    return { rate, total, placements, memory_mib: b.memory_mib() };
  }, [nodes, initial, pods]);
  console.log(JSON.stringify({
    benchmark: "SchedulingBasic", build: "wasm32", runtime: `Chromium ${browser.version()} (headless)`,
    nodes, initial_pods: initial, measured_pods: pods, all_bound: r.rate >= 0,
    pods_per_second: Math.round(r.rate), total_seconds: Number(r.total.toFixed(3)),
    placements: r.placements, memory_mib: r.memory_mib,
  }));
  process.exitCode = r.rate >= 0 ? 0 : 1;
} finally {
  await browser.close();
}
