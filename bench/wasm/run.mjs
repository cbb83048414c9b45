// Times the wasm32 build of the apiserver benchmarks in node (V8, as in Chromium).
// Usage: node bench/wasm/run.mjs [pods] [runs]
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";

const here = new URL(".", import.meta.url).pathname;
const wasm = readFileSync(here + "target/wasm32-unknown-unknown/release/kubeloop_bench_wasm.wasm");
const pods = Number(process.argv[2] ?? 150000);
const runs = Number(process.argv[3] ?? 5);
const { instance } = await WebAssembly.instantiate(wasm, { env: { now_ms: () => performance.now() } });
const list = instance.exports.bench_list(pods, runs);
console.log(`wasm list: all ${pods} pods, cluster-wide, median of ${runs}: ${list.toFixed(1)} ms`);
const writes = instance.exports.bench_writes(20000, 16, 10);
console.log(`wasm writes: 20000 ConfigMap creates from 16 clients, 10 watchers: ${writes.toFixed(0)} writes/s`);
