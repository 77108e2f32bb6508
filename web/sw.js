// The service worker: after one visit the site works with no network at all (a conference demo), examples
// and learned predictors included. web/build.mjs writes the list of the site's files and a version (a
// hash of their contents) into the copy in dist/; a new build is a new sw.js, so the browser installs it
// beside the old one. The old version keeps serving open pages (a page must never mix one build's wasm
// with another build's weights files); the page offers a reload, and the next load runs the new build.
const VERSION = 'dev';
const FILES = [];
const CACHE = `perfcard-${VERSION}`;

self.addEventListener('install', (event) => {
  // cache: 'reload': the files as the server has them now, not as the HTTP cache kept them.
  event.waitUntil(caches.open(CACHE).then((c) => c.addAll(FILES.map((f) => new Request(f, { cache: 'reload' })))));
});

self.addEventListener('activate', (event) => {
  event.waitUntil((async () => {
    for (const key of await caches.keys()) {
      if (key.startsWith('perfcard-') && key !== CACHE) await caches.delete(key);
    }
    // The first install takes the page that registered it (nothing older is serving it).
    await self.clients.claim();
  })());
});

self.addEventListener('message', (event) => {
  if (event.data === 'activate-now') self.skipWaiting();
});

self.addEventListener('fetch', (event) => {
  const req = event.request;
  if (req.method !== 'GET' || new URL(req.url).origin !== self.location.origin) return;
  event.respondWith((async () => {
    const cache = await caches.open(CACHE);
    const hit = await cache.match(req, { ignoreSearch: true });
    return hit ?? fetch(req);
  })());
});
