// Bundles src/kubeloop-editor.js and the CodeMirror modules it imports into one minified
// ES module, dist/kubeloop-editor.js, that the wasm imports (src/ui/codemirror.rs).
// Offline: everything comes from node_modules, installed by `npm ci` from package-lock.json.
import { build } from 'esbuild';
import { gzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';

const out = 'dist/kubeloop-editor.js';
await build({
  entryPoints: ['src/kubeloop-editor.js'],
  bundle: true,
  format: 'esm',
  minify: true,
  target: 'es2020',
  legalComments: 'eof',
  outfile: out,
  logLevel: 'warning',
});
const bytes = readFileSync(out);
console.log(`${out}: ${bytes.length} bytes, ${gzipSync(bytes, { level: 9 }).length} gzip`);
