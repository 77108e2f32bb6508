// node CatalogForPage.mjs IN OUT: the device catalog as the page's wasm module embeds it.
//
// weights/devices.json gives every number its source and notes (for people checking the catalog; the CLI
// embeds the file whole). Most of those texts never leave the core: it shows the sources of power figures
// and MIG tables (catalog_to_json) and reads no note. Dropped here, they are ~half of the catalog's gzip
// size in the page's first download. Only texts go: every value, flag and field the parser reads stays.
// tests/wasm/predict.test.mjs checks that the module's catalog document equals the CLI's (full file).
import { readFileSync, writeFileSync } from 'node:fs';

// Fields whose own "source" the core shows (catalog_to_json.cpp: power_sources, the MIG table's source).
const SHOWN_SOURCES = new Set(['tdp_w', 'idle_w', 'mig']);

function strip(value, key) {
  if (Array.isArray(value)) return value.map((v) => strip(v, null));
  if (value === null || typeof value !== 'object') return value;
  const out = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === 'note' || (k === 'source' && !SHOWN_SOURCES.has(key))) continue;
    out[k] = strip(v, k);
  }
  return out;
}

const [input, output] = process.argv.slice(2);
if (!input || !output) {
  console.error('usage: node CatalogForPage.mjs IN OUT');
  process.exit(2);
}
const doc = JSON.parse(readFileSync(input, 'utf8'));
if (!Array.isArray(doc.devices)) {
  console.error(`${input}: not a device catalog (no "devices" array)`);
  process.exit(1);
}
writeFileSync(output, JSON.stringify(strip(doc, null)));
