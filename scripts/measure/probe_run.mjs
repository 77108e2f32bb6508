// Runs PerfCard's machine probe ("this device": perfcard/machine_probe.h) through the wasm API, as the page
// does, and prints one JSON line: the probe's document plus `env` and, in Chromium, `browser`.
//   node probe_run.mjs --env node|chromium [--dist DIR] [--gemm-ms X] [--stream-ms X]
//   (DIR: the wasm build's dist/, default build/wasm/dist; the times default to the page's)
// node: this process. chromium: Debian's headless Chromium through playwright-core (tests/web/harness.mjs),
// the API and its module served from DIR on loopback; the probe runs in the page.
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const args = process.argv.slice(2);
let env = 'node';
let distDir = null;
const probeOpts = {};
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--env') env = args[++i];
  else if (args[i] === '--dist') distDir = args[++i];
  else if (args[i] === '--gemm-ms') probeOpts.gemmMs = Number(args[++i]);
  else if (args[i] === '--stream-ms') probeOpts.streamMs = Number(args[++i]);
  else throw new Error(`unknown option ${args[i]}`);
}
if (!['node', 'chromium'].includes(env)) throw new Error('usage: node probe_run.mjs --env node|chromium [--dist DIR]');

const harness = await import('../../tests/web/harness.mjs');
const dist = resolve(distDir ?? join(harness.root, 'build', 'wasm', 'dist'));

async function inNode() {
  const { createPerfCard } = await import(pathToFileURL(join(dist, 'perfcard.js')).href);
  const card = await createPerfCard();
  return { ...(await card.probeMachine(probeOpts)), env: 'node', runtime: `node ${process.version}` };
}

async function inChromium() {
  const server = await harness.serve(dist);
  let browser = null;
  try {
    browser = await harness.launch();
    const guard = await harness.guard(browser.context, server.origin);
    const page = await browser.context.newPage();
    await page.goto(`${server.origin}/package.json`);  // any same-origin document: the API is imported below
    const r = await page.evaluate(async (o) => {
      const { createPerfCard } = await import('/perfcard.js');
      const card = await createPerfCard();
      return card.probeMachine(o);
    }, probeOpts);
    if (guard.foreign.length) throw new Error(`the page asked for other origins: ${guard.foreign.join(', ')}`);
    const ua = await page.evaluate(() => navigator.userAgent.match(/(?:Headless)?Chrome\/[\d.]+/)?.[0] ?? null);
    return { ...r, env: 'chromium', runtime: ua };
  } finally {
    if (browser) await browser.close();
    await server.stop();
  }
}

console.log(JSON.stringify(env === 'node' ? await inNode() : await inChromium()));
