// embed.html: the <perf-card> widget in a page of its own, for hosts that allow iframes but no scripts.
//   <iframe src="https://YOUR.SITE/perfcard/embed.html#src=examples/resnet50.onnx&devices=h100-sxm5-80gb,l4&batch=1,8"
//           width="720" height="240" title="PerfCard"></iframe>
// The fragment carries the widget's attributes (src, devices, batch, precision, mode, region, dims,
// latency-target, runtime, title); src is resolved against this page and must be on its origin.
import './widget.js';

const known = new Set(['src', 'devices', 'batch', 'precision', 'mode', 'region', 'dims', 'latency-target', 'runtime', 'title']);

function render() {
  const params = new URLSearchParams(location.hash.replace(/^#/, ''));
  const el = document.createElement('perf-card');
  for (const [k, v] of params) if (known.has(k)) el.setAttribute(k, v);
  if (!params.has('src')) el.setAttribute('src', 'examples/resnet50.onnx');
  document.body.replaceChildren(el);
}

window.addEventListener('hashchange', render);
render();
