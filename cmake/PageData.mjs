// node PageData.mjs IN OUT: a data file as the page's wasm module embeds it (devices.json, roofline.json).
//
// The committed files carry texts for the people and scripts that check them: every catalog number its
// source and notes, the roofline constants the whole record of their fit. The CLI embeds the files whole.
// Most of those texts never leave the core: it shows the sources of power figures and MIG tables
// (catalog_to_json), reads no note, and says of the fit only which scripts made it and when (provenance_line in
// roofline_constants.cpp). Dropped here, they were 15 KB of the page's first download (gzip). Only texts
// go: every value, flag and field the parser reads stays. tests/wasm/predict.test.mjs checks that the
// module's catalog document (devices, runtimes, predictor) equals the CLI's.
import { readFileSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';

// Catalog fields whose own "source" the core shows (catalog_to_json.cpp: power_sources, the MIG table's).
const SHOWN_SOURCES = new Set(['tdp_w', 'idle_w', 'mig']);

function catalog(value, key) {
  if (Array.isArray(value)) return value.map((v) => catalog(v, null));
  if (value === null || typeof value !== 'object') return value;
  const out = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === 'note' || (k === 'source' && !SHOWN_SOURCES.has(key))) continue;
    out[k] = catalog(v, k);
  }
  return out;
}

function roofline(doc) {
  const record = typeof doc.provenance === 'string' && doc.provenance.startsWith('{') ? JSON.parse(doc.provenance) : null;
  if (!record) return doc;
  const kept = { created: record.created, script: record.script };
  for (const [key, stage] of Object.entries(record)) {
    if (key.startsWith('stage_') && stage && typeof stage.script === 'string') kept[key] = { script: stage.script };
  }
  return { ...doc, provenance: JSON.stringify(kept) };
}

const [input, output] = process.argv.slice(2);
if (!input || !output) {
  console.error('usage: node PageData.mjs IN OUT');
  process.exit(2);
}
const doc = JSON.parse(readFileSync(input, 'utf8'));
const name = basename(input);
const shrink = { 'devices.json': catalog, 'roofline.json': roofline }[name];
if (!shrink) {
  console.error(`PageData.mjs: no rule for ${name}`);
  process.exit(2);
}
writeFileSync(output, JSON.stringify(shrink(doc, null)));
