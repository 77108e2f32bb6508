// Times one model configuration with onnxruntime-node on this CPU and prints one JSON line.
//   node ort_run.mjs MODEL.onnx --threads N --dim name=value ... [--runs 10] [--min-seconds 1] [--profile-dir DIR]
// Run one configuration per process: peak resident memory (VmHWM) then belongs to it alone.
// --profile-dir: onnxruntime's own profile of every run (each kernel it ran, timed) is written into DIR (an
// empty folder) and its path printed as "profile" (scripts/measure/kernel_profile.py reads it).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';

import { timeModel } from './time_model.mjs';

const args = process.argv.slice(2);
const model = args[0];
let threads = 1, runs = 10, minSeconds = 1.0, warmup = 3, profileDir = null;
const dims = {};
for (let i = 1; i < args.length; i++) {
  const a = args[i];
  if (a === '--threads') threads = Number(args[++i]);
  else if (a === '--runs') runs = Number(args[++i]);
  else if (a === '--min-seconds') minSeconds = Number(args[++i]);
  else if (a === '--warmup') warmup = Number(args[++i]);
  else if (a === '--dim') { const [k, v] = args[++i].split('='); dims[k] = Number(v); }
  else if (a === '--profile-dir') profileDir = args[++i];
  else throw new Error(`unknown option ${a}`);
}

function vmhwmMiB() {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) / 1024 : null;
}

const sessionOptions = { intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: 'sequential', graphOptimizationLevel: 'all' };
if (profileDir) Object.assign(sessionOptions, { enableProfiling: true, profileFilePrefix: join(profileDir, 'ort') });
const r = await timeModel(ort, model, { dims, runs, minSeconds, warmup, versionKey: 'node', sessionOptions });
// The session's release writes the profile.
const profile = profileDir ? readdirSync(profileDir).filter((f) => f.endsWith('.json')).map((f) => join(profileDir, f)) : [];
if (profileDir && profile.length !== 1) throw new Error(`expected one profile in ${profileDir}, found ${profile.length}`);
console.log(JSON.stringify({ ...r, peak_rss_mib: vmhwmMiB(), warmup, ...(profileDir ? { profile: profile[0] } : {}) }));
