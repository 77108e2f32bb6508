#!/usr/bin/env node
// Builds the static site into dist/ (not committed): the page, the widget and its embed page, the wasm
// module with its JS API (from build/wasm/dist, made by scripts/build.sh --wasm-only), the bundled
// examples and the predictor's accuracy report (docs/accuracy.md, rendered to accuracy.html).
// No bundler: the same ES modules, each minified on its own by Debian's esbuild (scripts/setup.sh installs
// it), so the files and imports the site serves are the sources' one for one.
//
//   node web/build.mjs [--out DIR] [--quiet] [--no-minify]
//   --no-minify  the sources as they are, comments included (to read the page in a browser's debugger)
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { brotliCompressSync, constants as zlibConstants, gzipSync } from 'node:zlib';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const out = resolve(args.includes('--out') ? args[args.indexOf('--out') + 1] : join(root, 'dist'));
const quiet = args.includes('--quiet');
const minify = !args.includes('--no-minify');
const wasmDist = resolve(process.env.PERFCARD_WASM_DIST ?? join(root, 'build', 'wasm', 'dist'));

function fail(msg) {
  console.error(`web/build.mjs: ${msg}`);
  process.exit(1);
}

// perfcard_learned.*: the learned predictors' runtime, a second module the API loads on first use.
const libFiles = ['perfcard.js', 'perfcard.d.ts', 'perfcard_wasm.js', 'perfcard_wasm.wasm', 'perfcard_learned.js',
  'perfcard_learned.wasm'];
for (const f of libFiles) {
  if (!existsSync(join(wasmDist, f))) fail(`${join(wasmDist, f)} is missing: run scripts/build.sh --wasm-only first`);
}

rmSync(out, { recursive: true, force: true });
mkdirSync(join(out, 'lib'), { recursive: true });
mkdirSync(join(out, 'examples'), { recursive: true });

// JS and CSS as served: minified by esbuild one file at a time (identifiers of a module's own scope renamed,
// comments and spaces gone; imports, exports and string keys kept). No syntax is lowered (esbuild's
// default target is the newest), and non-ASCII text stays UTF-8 rather than \u escapes.
function minified(text, file) {
  if (!minify) return text;
  const loader = file.endsWith('.css') ? 'css' : 'js';
  const r = spawnSync('esbuild', ['--minify', `--loader=${loader}`, '--charset=utf8', '--log-level=error'],
    { input: text, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.error?.code === 'ENOENT') fail('esbuild is not installed: scripts/setup.sh installs it (Debian package esbuild), or build with --no-minify');
  if (r.status !== 0) fail(`esbuild could not minify ${file}: ${r.stderr || r.error?.message}`);
  return r.stdout;
}
const minifiable = (f) => /\.(js|css)$/.test(f);

// The page and the widget.
const webDir = join(root, 'web');
for (const f of readdirSync(webDir)) {
  if (!/\.(html|js|css|svg)$/.test(f) || f === 'build.mjs') continue;
  // sw.js stays as written (its version and file list are filled in below, and it is 0.8 KiB gzip).
  if (minifiable(f) && f !== 'sw.js') writeFileSync(join(out, f), minified(readFileSync(join(webDir, f), 'utf8'), f));
  else copyFileSync(join(webDir, f), join(out, f));
}
for (const f of libFiles) {
  if (minifiable(f)) writeFileSync(join(out, 'lib', f), minified(readFileSync(join(wasmDist, f), 'utf8'), f));
  else copyFileSync(join(wasmDist, f), join(out, 'lib', f));
}
writeFileSync(join(out, 'lib', 'package.json'), '{"type": "module"}\n');

// Examples: those listed in web/examples.json that exist in public/examples.
const listed = JSON.parse(readFileSync(join(webDir, 'examples.json'), 'utf8'));
const examples = [];
for (const ex of listed) {
  const src = join(root, 'public', 'examples', ex.file);
  if (!existsSync(src)) {
    console.warn(`web/build.mjs: example ${ex.file} is not in public/examples; left out of the gallery`);
    continue;
  }
  copyFileSync(src, join(out, 'examples', ex.file));
  examples.push({ ...ex, bytes: statSync(src).size });
}
writeFileSync(join(out, 'examples', 'index.json'), JSON.stringify(examples, null, 1) + '\n');
// Other static assets under public/ (besides examples and the README).
for (const f of readdirSync(join(root, 'public'))) {
  if (f === 'examples' || f === 'README.md') continue;
  const p = join(root, 'public', f);
  if (statSync(p).isFile()) copyFileSync(p, join(out, f));
}

// Learned predictors' weights files, fetched by the page when first needed (web/predictors.js). Every
// weights/*.pcwt the manifest lists goes; the core checks each against the same manifest when it loads it.
mkdirSync(join(out, 'predictors'), { recursive: true });
const manifest = JSON.parse(readFileSync(join(root, 'weights', 'manifest.json'), 'utf8'));
for (const f of manifest.files.filter((e) => e.path.endsWith('.pcwt'))) {
  copyFileSync(join(root, 'weights', f.path), join(out, 'predictors', f.path));
}

// docs/accuracy.md -> accuracy.html: headings, paragraphs, lists, tables, code; text is escaped.
function esc(s) {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
function inline(s) {
  return esc(s)
    .replace(/`([^`]+)`/g, '<code>$1</code>')
    .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>')
    .replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (m, t, href) => (/^[\w./#-]+$/.test(href) && !href.includes('//') ? `<a href="${href.replace(/\.md$/, '.html')}">${t}</a>` : `${t} (${href})`));
}
function markdown(md) {
  const lines = md.split('\n');
  const html = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (/^```/.test(line)) {
      const body = [];
      for (i++; i < lines.length && !/^```/.test(lines[i]); i++) body.push(lines[i]);
      i++;
      html.push(`<pre><code>${esc(body.join('\n'))}</code></pre>`);
    } else if (/^#{1,6} /.test(line)) {
      const n = line.match(/^#+/)[0].length;
      html.push(`<h${n}>${inline(line.slice(n + 1))}</h${n}>`);
      i++;
    } else if (/^\|/.test(line)) {
      const rows = [];
      for (; i < lines.length && /^\|/.test(lines[i]); i++) rows.push(lines[i]);
      const cells = (r) => r.replace(/^\||\|$/g, '').split('|').map((c) => c.trim());
      const head = cells(rows[0]);
      const align = cells(rows[1] ?? '').map((c) => (c.endsWith(':') ? ' class="num"' : ''));
      const body = rows.slice(2).map((r) => `<tr>${cells(r).map((c, k) => `<td${align[k] ?? ''}>${inline(c)}</td>`).join('')}</tr>`);
      html.push(`<div class="table-wrap" tabindex="0"><table><thead><tr>${head.map((c, k) => `<th scope="col"${align[k] ?? ''}>${inline(c)}</th>`).join('')}</tr></thead><tbody>${body.join('')}</tbody></table></div>`);
    } else if (/^\s*- /.test(line)) {
      const items = [];
      for (; i < lines.length && (/^\s*- /.test(lines[i]) || /^\s{2,}\S/.test(lines[i])); i++) {
        if (/^\s*- /.test(lines[i])) items.push(lines[i].replace(/^\s*- /, ''));
        else items[items.length - 1] += ` ${lines[i].trim()}`;
      }
      html.push(`<ul>${items.map((t) => `<li>${inline(t)}</li>`).join('')}</ul>`);
    } else if (line.trim() === '') {
      i++;
    } else {
      const para = [];
      for (; i < lines.length && lines[i].trim() !== '' && !/^(#|\||```|\s*- )/.test(lines[i]); i++) para.push(lines[i]);
      html.push(`<p>${inline(para.join(' '))}</p>`);
    }
  }
  return html.join('\n');
}
const accPath = join(root, 'docs', 'accuracy.md');
const accuracy = existsSync(accPath) ? readFileSync(accPath, 'utf8') : '# Accuracy\n\nNo accuracy report in this build.\n';
copyFileSync(accPath, join(out, 'accuracy.md'));
// The eager floor's check against public small-batch measurements, for the page's provenance section.
const floorPath = join(root, 'docs', 'eager-floor.json');
if (existsSync(floorPath)) copyFileSync(floorPath, join(out, 'eager-floor.json'));
writeFileSync(join(out, 'accuracy.html'), `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'self'; script-src 'none'; style-src 'self'; img-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'">
<title>Accuracy of the predictor · PerfCard</title>
<link rel="stylesheet" href="style.css">
<link rel="icon" href="favicon.svg" type="image/svg+xml">
</head>
<body>
<main class="doc">
<p><a href="./">← PerfCard</a> · from <code>docs/accuracy.md</code> (<a href="accuracy.md">source</a>)</p>
<article class="panel">
${markdown(accuracy)}
</article>
</main>
</body>
</html>
`);

// The service worker's copy: every file of the site (and the root URL) to cache at the first visit, and a
// version that changes whenever any of their bytes do (web/sw.js says why).
function siteFiles(dir, prefix = '') {
  return readdirSync(dir).sort().flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? siteFiles(p, `${prefix}${f}/`) : [`${prefix}${f}`];
  });
}
const cached = siteFiles(out).filter((f) => f !== 'sw.js' && f !== 'build-info.json');
const digest = createHash('sha256');
for (const f of cached) digest.update(`${f}\0`).update(readFileSync(join(out, f)));
const siteVersion = digest.digest('hex').slice(0, 16);
const swSource = readFileSync(join(out, 'sw.js'), 'utf8');
const sw = swSource.replace("const VERSION = 'dev';", `const VERSION = '${siteVersion}';`)
  .replace('const FILES = [];', `const FILES = ${JSON.stringify(['./', ...cached])};`);
if (sw === swSource || !sw.includes(siteVersion) || sw.includes('const FILES = [];')) fail('web/sw.js lacks its VERSION / FILES lines');
writeFileSync(join(out, 'sw.js'), sw);

// What a page downloads: the module, its loader and the API (and what the page adds on top).
// gzip -9 is what the budget counts; brotli (quality 11) is what most static hosts serve, for reference.
function size(p) {
  const b = readFileSync(p);
  return {
    raw: b.length, gzip: gzipSync(b, { level: 9 }).length,
    brotli: brotliCompressSync(b, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 11 } }).length,
  };
}
const add = (a, b) => ({ raw: a.raw + b.raw, gzip: a.gzip + b.gzip, brotli: a.brotli + b.brotli });
const sum = (files) => files.map((f) => size(join(out, f))).reduce(add, { raw: 0, gzip: 0, brotli: 0 });
const core = sum(['lib/perfcard_wasm.wasm', 'lib/perfcard_wasm.js', 'lib/perfcard.js']);
// The page's own files that index.html loads before a model is opened: followed from its src/href links
// and the scripts' static imports and workers (lib/ is the module above, fetched by the worker), and the
// service worker it registers. The widget (widget.html, embed.*) is another entry point, counted apart.
function loadedBy(entry) {
  const seen = new Set();
  const todo = [entry];
  while (todo.length) {
    const f = todo.pop();
    if (seen.has(f) || f.startsWith('lib/') || !existsSync(join(out, f)) || !statSync(join(out, f)).isFile()) continue;
    seen.add(f);
    const text = readFileSync(join(out, f), 'utf8');
    const refs = f.endsWith('.html')
      ? [...text.matchAll(/<(?:script|link|img)\b[^>]*?\b(?:src|href)="([^"#?:]+)"/g)].map((m) => m[1])
      : f.endsWith('.js') ? [...text.matchAll(/(?:from\s*|new URL\(\s*)(['"])(\.\.?\/[^'"]+)\1/g)].map((m) => m[2]) : [];
    for (const r of refs) todo.push(join(dirname(f), r).replace(/^\.\//, ''));
  }
  return [...seen];
}
const pageFiles = [...loadedBy('index.html'), 'sw.js'];
const page = sum(pageFiles);
const widget = sum(readdirSync(out).filter((f) => /\.(html|js|css|svg)$/.test(f) && f !== 'accuracy.html' && !pageFiles.includes(f)));
// Fetched on first use, not part of the first download (budget: all predictor files <= 1 MB gzip): the
// weights files, and the runtime that runs them.
const predictors = sum(readdirSync(join(out, 'predictors')).map((f) => `predictors/${f}`));
const learnedRuntime = sum(['lib/perfcard_learned.wasm', 'lib/perfcard_learned.js']);
const summary = { out, version: siteVersion, offline: { files: cached.length + 1 }, examples: examples.map((e) => e.file), core, page: { ...page, files: pageFiles.sort() }, widget, total: add(core, page), predictors, learnedRuntime };
writeFileSync(join(out, 'build-info.json'), JSON.stringify(summary, null, 1) + '\n');
if (!quiet) {
  const kb = (n) => `${(n / 1024).toFixed(1)} KiB`;
  console.log(`web/build.mjs: ${out}`);
  console.log(`  wasm + loader + API   ${kb(core.raw)} raw, ${kb(core.gzip)} gzip`);
  console.log(`  ${`page (${pageFiles.length} files)`.padEnd(22)}${kb(page.raw)} raw, ${kb(page.gzip)} gzip`);
  console.log(`  first download        ${kb(summary.total.raw)} raw, ${kb(summary.total.gzip)} gzip (aim: <= 300 KiB gzip before a model is opened), ${kb(summary.total.brotli)} brotli`);
  console.log(`  widget (its own page) ${kb(widget.raw)} raw, ${kb(widget.gzip)} gzip, with the same module`);
  console.log(`  learned predictors    ${kb(predictors.raw)} raw, ${kb(predictors.gzip)} gzip, fetched on first use (aim: <= 1 MB gzip)`);
  console.log(`  learned runtime       ${kb(learnedRuntime.raw)} raw, ${kb(learnedRuntime.gzip)} gzip, fetched with the first of them`);
  console.log(`  examples              ${examples.map((e) => e.file).join(', ')}`);
}
