#!/usr/bin/env node
// A small static file server for dist/, on the loopback interface only: GET and HEAD of files under the
// root, nothing else (no directory listings, no paths outside the root, no symlinks followed out).
// Bounded: at most --max-connections sockets, idle sockets closed, and an optional --max-seconds after
// which it exits.
//
//   node scripts/serve.mjs [--root dist] [--port 8080] [--max-seconds N] [--open-path '#example=resnet50'] [--quiet]
//   (--port 0 picks a free port; a busy port moves to the next of ten; the URL is printed as
//   "serving http://127.0.0.1:PORT/")
import { createReadStream, realpathSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, resolve, sep } from 'node:path';

const argv = process.argv.slice(2);
function opt(name, fallback) {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < argv.length ? argv[i + 1] : fallback;
}
const root = realpathSync(resolve(opt('root', 'dist')));
const port = Number(opt('port', process.env.PORT ?? '8080'));
const maxSeconds = Number(opt('max-seconds', '0'));
const maxConnections = Number(opt('max-connections', '64'));
const quiet = argv.includes('--quiet');
const openPath = opt('open-path', '');

const types = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.onnx': 'application/octet-stream',
  '.md': 'text/markdown; charset=utf-8',
  '.ts': 'text/plain; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

// The page carries its policy in a meta tag (any static host works); a worker takes its policy from its
// script's response, so this server sends the same policy as a header with every response.
const csp = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self'; style-src 'self'; " +
  "img-src 'self' data: blob:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-src 'self'";

function send(res, code, text) {
  res.writeHead(code, { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' });
  res.end(`${text}\n`);
}

const server = createServer((req, res) => {
  if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'method not allowed');
  let path;
  try {
    path = decodeURIComponent(new URL(req.url, 'http://localhost').pathname);
  } catch {
    return send(res, 400, 'bad request');
  }
  if (path.length > 1024 || path.includes('\0')) return send(res, 400, 'bad request');
  if (path.endsWith('/')) path += 'index.html';
  let file;
  try {
    file = realpathSync(join(root, path));
  } catch {
    return send(res, 404, 'not found');
  }
  if (file !== root && !file.startsWith(root + sep)) return send(res, 404, 'not found');
  let st;
  try {
    st = statSync(file);
  } catch {
    return send(res, 404, 'not found');
  }
  if (!st.isFile()) return send(res, 404, 'not found');
  res.writeHead(200, {
    'content-type': types[extname(file).toLowerCase()] ?? 'application/octet-stream',
    'content-length': st.size,
    'cache-control': 'no-cache',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'content-security-policy': csp,
  });
  if (req.method === 'HEAD') return res.end();
  createReadStream(file).on('error', () => res.destroy()).pipe(res);
  if (!quiet) console.log(`${req.method} ${path}`);
});
server.maxConnections = maxConnections;
server.keepAliveTimeout = 5000;
server.headersTimeout = 10000;
server.requestTimeout = 30000;
let tries = 0;
server.on('error', (e) => {
  if (e.code === 'EADDRINUSE' && port !== 0 && tries < 10) {
    tries++;
    server.listen(port + tries, '127.0.0.1');
    return;
  }
  console.error(`serve.mjs: ${e.message}`);
  process.exit(1);
});
server.on('listening', () => {
  const url = `http://127.0.0.1:${server.address().port}/`;
  console.log(`serving ${url} from ${root}`);
  if (openPath) console.log(`open ${url}${openPath}`);
});
server.listen(port, '127.0.0.1');
if (maxSeconds > 0) setTimeout(() => { server.close(); server.closeAllConnections?.(); }, maxSeconds * 1000).unref?.();
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => { server.close(); process.exit(0); });
