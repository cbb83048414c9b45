// Times the wasm32 build of the engine's benchmarks in node (V8, as in Chromium).
// Usage: node bench/wasm/run.mjs [pods] [runs]          the apiserver list and writes
//        node bench/wasm/run.mjs scheduling [nodes] [initial] [pods]
//                                                       scheduler_perf SchedulingBasic,
//                                                       one JSON line like the native CLI's
//        node bench/wasm/run.mjs envelope [nodes] [pods]
//                                                       the full-cluster envelope, one
//                                                       JSON line like the native CLI's
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";

const here = new URL(".", import.meta.url).pathname;
const wasm = readFileSync(here + "target/wasm32-unknown-unknown/release/kubeloop_bench_wasm.wasm");
const { instance } = await WebAssembly.instantiate(wasm, { env: { now_ms: () => performance.now() } });
const bench = instance.exports;

if (process.argv[2] === "scheduling") {
  const nodes = Number(process.argv[3] ?? 5000);
  const initial = Number(process.argv[4] ?? 1000);
  const pods = Number(process.argv[5] ?? 10000);
  const t = performance.now();
  const rate = bench.bench_scheduling(nodes, initial, pods);
  const total = (performance.now() - t) / 1000;
  const placements = BigInt.asUintN(64, bench.scheduling_placements()).toString(16).padStart(16, "0");
  console.log(JSON.stringify({
    benchmark: "SchedulingBasic", build: "wasm32", nodes, initial_pods: initial, measured_pods: pods,
    all_bound: rate >= 0, pods_per_second: Math.round(rate), total_seconds: Number(total.toFixed(3)), placements,
    memory_mib: bench.memory_mib(),
  }));
  process.exit(rate >= 0 ? 0 : 1);
}

if (process.argv[2] === "envelope") {
  const { envelopeLine } = await import("./envelope.mjs");
  const nodes = Number(process.argv[3] ?? 1000);
  const pods = Number(process.argv[4] ?? 30000);
  const t = performance.now();
  const seconds = bench.bench_envelope(nodes, pods);
  const wall = (performance.now() - t) / 1000;
  const line = envelopeLine(bench, { nodes, pods, seconds, wall, runtime: `node ${process.version} (V8)` });
  console.log(JSON.stringify(line));
  process.exit(seconds >= 0 ? 0 : 1);
}

const pods = Number(process.argv[2] ?? 150000);
const runs = Number(process.argv[3] ?? 5);
const list = bench.bench_list(pods, runs);
console.log(`wasm list: all ${pods} pods, cluster-wide, median of ${runs}: ${list.toFixed(1)} ms`);
const writes = bench.bench_writes(20000, 16, 10);
console.log(`wasm writes: 20000 ConfigMap creates from 16 clients, 10 watchers: ${writes.toFixed(0)} writes/s`);
