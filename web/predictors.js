// Learned predictors for the page, the worker and the widget. Their weights files are not in the first
// download: each is fetched the first time a prediction asks for it (predictor 'auto' or its own name),
// checked by the core against the manifest built into the module (size, sha256, format, feature schema),
// and kept for the card's lifetime. A file that cannot be fetched or is refused never stops a prediction:
// the roofline predicts instead and the caller gets a note saying why, to show.

/** Learned predictor name -> its file, relative to the site's root (web/build.mjs copies them there). */
export const LEARNED = {
  trees: 'predictors/trees.pcwt', gnn: 'predictors/gnn.pcwt', transformer: 'predictors/transformer.pcwt',
  ensemble: 'predictors/ensemble.pcwt',
};
/** The predictors a learned one combines: loaded before it (the core finds them by name). */
export const MEMBERS = { ensemble: ['trees', 'gnn', 'transformer'] };  // weights/ensemble.pcwt's ensemble.members
/** The learned predictors 'auto' chooses among (the core's AutoPredictor picks, per device family, the one
 *  with the lowest held-out error): every one, as the CLI loads every one, so that both give the same rows. */
export const AUTO_CHOOSES = Object.keys(LEARNED);

const loads = new WeakMap();  // card -> Map(name -> Promise<null | reason>)
const downloads = new Map();  // url -> Promise<Uint8Array>: a card made after a trap loads the same bytes

function download(url) {
  if (!downloads.has(url)) {
    const p = fetch(url, { credentials: 'same-origin' }).then(async (r) => {
      if (!r.ok) throw new Error(`HTTP ${r.status}`);
      return new Uint8Array(await r.arrayBuffer());
    });
    downloads.set(url, p);
    p.catch(() => downloads.delete(url));  // a failed download may be retried
  }
  return downloads.get(url);
}

/** Loads one learned predictor into `card` once; resolves to null, or to the reason it is not loaded. */
export function loadLearned(card, name, base, onBytes) {
  if (!loads.has(card)) loads.set(card, new Map());
  const mine = loads.get(card);
  if (!mine.has(name)) {
    mine.set(name, (async () => {
      const url = new URL(LEARNED[name], base).href;
      const file = LEARNED[name].split('/').pop();
      try {
        const bytes = await download(url);
        onBytes?.(bytes.length);
        await card.loadPredictor(bytes, file);
        return null;
      } catch (e) {
        mine.delete(name);  // the next prediction tries again (the network may be back)
        return `the ${name} predictor (${file}) could not be loaded: ${e?.message ?? e}`;
      }
    })());
  }
  return mine.get(name);
}

/**
 * The learned files `options` needs, loaded into `card`. Resolves to {options, note}: the options to predict
 * with (a request for a learned predictor whose file was refused becomes the roofline's) and a note for the
 * user, or null when everything asked for is there.
 */
export async function withPredictors(card, options, base, onBytes) {
  const want = options.predictor ?? 'auto';
  const asked = want === 'auto' ? AUTO_CHOOSES : LEARNED[want] ? [want] : [];
  const names = [...new Set(asked.flatMap((n) => [...(MEMBERS[n] ?? []), n]))];
  // Every file and the runtime that runs them download at once (a failure shows in its file's note); they
  // load in order below.
  if (names.length) card.loadLearnedRuntime().catch(() => {});
  for (const n of names) download(new URL(LEARNED[n], base).href).catch(() => {});
  // Members first, in order: a combining predictor's file is refused until they are loaded.
  const notes = [];
  for (const n of names) {
    const why = await loadLearned(card, n, base, onBytes);
    if (why) notes.push(why);
  }
  if (!notes.length) return { options, note: null };
  const fallback = want !== 'auto' && want !== 'roofline';
  return {
    options: fallback ? { ...options, predictor: 'roofline' } : options,
    note: `${notes.join('; ')}. The roofline predicts ${want === 'auto' ? 'every row' : 'instead'}.`,
  };
}
