// The JSON line of a wasm32 envelope run, the same fields as `kubeloop bench envelope`
// where wasm has them (no CPU time; memory is the wasm memory's size at the end:
// linear memory never shrinks, so that is its peak).
export function envelopeLine(b, { nodes, pods, seconds, wall, runtime }) {
  const memory = b.memory.buffer.byteLength;
  return {
    benchmark: "envelope", build: "wasm32", runtime, nodes, pods, seed: 1,
    deployments: b.envelope_report(4), namespaces: b.envelope_report(5), ready: b.envelope_report(3),
    wall_seconds: Number(wall.toFixed(3)), setup_seconds: Number(b.envelope_report(0).toFixed(3)),
    seconds: Number(seconds.toFixed(3)), virtual_ms: b.envelope_report(1), messages: b.envelope_report(2),
    wasm_memory_bytes: memory, bytes_per_pod: Math.floor(memory / Math.max(pods, 1)),
    placements: BigInt.asUintN(64, b.envelope_placements()).toString(16).padStart(16, "0"),
  };
}
