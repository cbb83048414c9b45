// Serves the release build in ../dist on 127.0.0.1 for Playwright and the benchmark.
// No dependencies: `node serve-dist.mjs [port]` (default: $E2E_PORT or 4173).
import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(fileURLToPath(new URL('../dist', import.meta.url)));
const port = Number(process.argv[2] ?? process.env.E2E_PORT ?? 4173);
const types = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.yaml': 'text/yaml; charset=utf-8',
};

try {
  await stat(join(root, 'index.html'));
} catch {
  console.error(`serve-dist: ${root}/index.html is missing; run \`trunk build --release\` first`);
  process.exit(1);
}

createServer(async (req, res) => {
  const path = decodeURIComponent(new URL(req.url, 'http://localhost').pathname);
  let file = normalize(join(root, path));
  if (file !== root && !file.startsWith(root + sep)) {
    res.writeHead(403).end();
    return;
  }
  if (path.endsWith('/')) file = join(file, 'index.html');
  try {
    const body = await readFile(file);
    res.writeHead(200, {
      'content-type': types[extname(file)] ?? 'application/octet-stream',
      'cache-control': 'no-store',
    });
    res.end(body);
  } catch {
    // Single-page app: unknown paths get the page, as `trunk serve` does.
    const body = await readFile(join(root, 'index.html'));
    res.writeHead(200, { 'content-type': types['.html'], 'cache-control': 'no-store' });
    res.end(body);
  }
}).listen(port, '127.0.0.1', () => {
  console.log(`serve-dist: http://127.0.0.1:${port}/ serves ${root}`);
});
