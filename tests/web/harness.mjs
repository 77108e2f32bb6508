// Shared by the browser tests and the web benchmark: serves dist/ on 127.0.0.1 with scripts/serve.mjs and
// drives Debian's Chromium (headless) through playwright-core. Nothing outside the site is fetched: every
// request that is not to the site's own origin is aborted and recorded.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const dist = resolve(process.env.PERFCARD_DIST ?? join(root, 'dist'));
export const chromiumPath = process.env.PERFCARD_CHROMIUM ?? '/usr/bin/chromium';

/** Why the browser tests cannot run here, or null. */
export async function unavailable() {
  if (!existsSync(chromiumPath)) return `no Chromium at ${chromiumPath} (scripts/setup.sh --browser installs it)`;
  try {
    await import('playwright-core');
  } catch {
    return 'playwright-core is not installed (npm install)';
  }
  if (!existsSync(join(dist, 'index.html'))) return `${dist} is not built (node web/build.mjs)`;
  return null;
}

/** Starts scripts/serve.mjs on a free loopback port; resolves to {origin, stop()}. */
export function serve(dir = dist, port = 0) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [join(root, 'scripts', 'serve.mjs'), '--root', dir, '--port', String(port), '--quiet'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let buf = '';
    const onData = (d) => {
      buf += d;
      const m = buf.match(/serving (http:\/\/127\.0\.0\.1:\d+)\//);
      if (m) {
        child.stdout.off('data', onData);
        child.stdout.resume();
        resolvePromise({ origin: m[1], stop: () => new Promise((r) => { child.once('exit', r); child.kill('SIGTERM'); }) });
      }
    };
    child.stdout.on('data', onData);
    child.once('exit', (code) => reject(new Error(`serve.mjs exited with ${code} before listening`)));
  });
}

/** Launches headless Chromium with a fresh profile; resolves to {browser, close()}. */
export async function launch() {
  const { chromium } = await import('playwright-core');
  const profile = mkdtempSync(join(tmpdir(), 'perfcard-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
    viewport: { width: 1280, height: 900 },
    acceptDownloads: true,
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * Routes every request of the context: same-origin ones go through, any other is aborted and recorded in
 * the returned list (which must stay empty). `offline()` then aborts even same-origin requests.
 */
export async function guard(context, origin) {
  const foreign = [];
  const state = { offline: false, sameOrigin: [] };
  await context.route('**/*', (route) => {
    const url = route.request().url();
    const sameOrigin = url.startsWith(`${origin}/`) || url === origin;
    const local = url.startsWith('blob:') || url.startsWith('data:');
    if (!sameOrigin && !local) {
      foreign.push(url);
      return route.abort('blockedbyclient');
    }
    if (state.offline && sameOrigin) {
      state.sameOrigin.push(url);
      return route.abort('internetdisconnected');
    }
    return route.continue();
  });
  // Requests that never reach routing (e.g. made by the browser itself) are still seen here.
  context.on('request', (req) => {
    const url = req.url();
    if (!url.startsWith(origin) && !url.startsWith('blob:') && !url.startsWith('data:') && !foreign.includes(url)) foreign.push(url);
  });
  return {
    foreign,
    offline: (on = true) => { state.offline = on; },
    requestsWhileOffline: state.sameOrigin,
  };
}
