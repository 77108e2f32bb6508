#include "perfcard/predict.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "perfcard/error.h"
#include "perfcard/features.h"
#include "perfcard/power_model.h"
#include "perfcard/roofline_predictor.h"
#include "perfcard/report.h"
#include "json_writer.h"

namespace perfcard {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
// The runtime whose latency the host's time per kernel sets (host_us), and the largest such time taken: a
// tenth of a second per kernel is no host, it is a typo.
constexpr const char* kHostRuntime = "pytorch-eager";
constexpr double kMaxHostUs = 100000;

std::string lower(std::string s) {
  for (auto& ch : s) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// The dim that --batch binds: a symbol named like a batch, else a symbolic leading dim of an input.
std::string find_batch_symbol(const Model& m) {
  std::string leading;
  for (int v : m.graph.inputs) {
    const Value& val = m.graph.values[std::size_t(v)];
    if (!val.declared || !val.declared->has_shape) continue;
    for (std::size_t i = 0; i < val.declared->dims.size(); ++i) {
      const std::string& s = val.declared->dims[i].symbol;
      if (s.empty()) continue;
      std::string l = lower(s);
      if (l.find("batch") != std::string::npos || l == "n" || l == "b" || l == "bs") return s;
      if (i == 0 && leading.empty()) leading = s;
    }
  }
  return leading;
}

std::vector<const Device*> select_devices(const DeviceCatalog& cat, const std::vector<std::string>& ids) {
  std::vector<const Device*> out;
  auto add_kind = [&](const char* kind, bool default_view_only) {
    for (const auto& d : cat.devices())
      if ((!kind || d.kind == kind) && (d.default_view || !default_view_only)) out.push_back(&d);
  };
  if (ids.empty()) add_kind("gpu", true);
  for (const auto& id : ids) {
    if (id == "all" || id == "gpus") add_kind("gpu", true);
    else if (id == "all-gpus") add_kind("gpu", false);
    else if (id == "cpus") add_kind("cpu", false);
    else if (id == "every") add_kind(nullptr, false);
    else out.push_back(&cat.get(id));
  }
  std::vector<const Device*> unique;
  for (const Device* d : out)
    if (std::find(unique.begin(), unique.end(), d) == unique.end()) unique.push_back(d);
  return unique;
}

// A precision the device lacks falls back to the nearest one it has, and the output says so.
Precision usable_precision(const Device& d, Precision want) {
  if (d.supports(want)) return want;
  for (Precision p : {Precision::FP16, Precision::BF16, Precision::FP32})
    if (p != want && d.supports(p) && precision_bits(p) >= precision_bits(want)) return p;
  return Precision::FP32;
}

}  // namespace

PredictResult predict(const Model& model, const DeviceCatalog& catalog, const Predictor& predictor,
                      const RooflineConstants& constants, const CarbonTable& carbon, const PredictOptions& opt,
                      PredictCache* cache) {
  PredictResult res;
  if (opt.batches.empty()) throw option_error("no batch size given");
  if (opt.batches.size() > kMaxBatchSizes)
    throw option_error(std::to_string(opt.batches.size()) + " batch sizes given; at most " + std::to_string(kMaxBatchSizes) +
                " per prediction");
  for (auto b : opt.batches)
    if (b <= 0 || b > (std::int64_t{1} << 24)) throw option_error("batch " + std::to_string(b) + " is out of range (1 .. 2^24)");
  res.batch_symbol = find_batch_symbol(model);
  res.predictor_requested = predictor.name();
  res.memory_protocol = std::string(mode_name(opt.mode));
  if (opt.mode == Mode::Training) {
    res.optimizer = std::string(optimizer_name(opt.optimizer));
    // Convolutions with no normalization of any kind (LayerNorm decomposed: ReduceMean) may be an eval-mode
    // export that folded its BatchNorms, or a network without them (VGG): said as a possibility.
    bool conv = false, norm = false;
    for (const Node& n : model.graph.nodes) {
      conv = conv || n.op_type == "Conv";
      const OpSpec* spec = find_op(n.domain, n.op_type);
      norm = norm || (spec && spec->cls == OpClass::Normalization) || n.op_type == "ReduceMean";
    }
    if (conv && !norm)
      res.warnings.push_back("training: the graph has convolutions and no normalization; if the exporter folded "
                             "them into the convolutions (an eval-mode export), eager training still runs them, and "
                             "their time and memory are not counted (export with training=TrainingMode.PRESERVE)");
    if (predictor.name() != "roofline")
      res.warnings.push_back("training steps are timed by the roofline: the learned predictors trained on inference runs");
  }
  std::vector<std::int64_t> batches = opt.batches;
  if (res.batch_symbol.empty()) {
    res.warnings.push_back("the model has no symbolic batch dim; every prediction is for the batch fixed in the graph");
    batches = {1};
  }
  const CarbonRegion& region = carbon.get(opt.region.empty() ? carbon.default_region() : opt.region);
  res.region_code = opt.grid_g_per_kwh ? "custom" : region.code;
  res.grid_g_per_kwh = opt.grid_g_per_kwh.value_or(region.g_per_kwh);
  res.pue = opt.pue.value_or(carbon.default_pue());
  // Written so that NaN fails too (every comparison with NaN is false).
  if (!(res.grid_g_per_kwh >= 0) || !std::isfinite(res.grid_g_per_kwh) || !(res.pue >= 1) || !std::isfinite(res.pue))
    throw option_error("grid intensity must be a finite number >= 0 and PUE a finite number >= 1");
  if (opt.latency_target_ms && !(*opt.latency_target_ms > 0 && std::isfinite(*opt.latency_target_ms)))
    throw option_error("latency target must be a finite number > 0");
  if (opt.host_us && !(*opt.host_us > 0 && *opt.host_us <= kMaxHostUs))
    throw option_error("host_us (the host's time per kernel, microseconds) must be a number above 0, at most " +
                       std::to_string(int(kMaxHostUs)));
  if (opt.host_us && opt.gpu_runtime != kHostRuntime)
    res.warnings.push_back("host_us applies to " + std::string(kHostRuntime) + " only; runtime '" + opt.gpu_runtime +
                           "' is predicted with its own constants");
  // Devices the caller describes join the catalog for this call only.
  const bool extra = !opt.extra_devices.is_null();
  const DeviceCatalog with_extra = extra ? catalog.with_devices(opt.extra_devices) : DeviceCatalog();
  const DeviceCatalog& cat = extra ? with_extra : catalog;
  const auto devices = select_devices(cat, opt.devices);
  std::unique_ptr<RooflinePredictor> feature_timer;  // times the plan for feature rows (--features)
  std::unique_ptr<RooflinePredictor> slice_timer;    // times MIG slices

  for (std::int64_t batch : batches) {
    AnalyzeOptions ao;
    ao.dims = opt.dims;
    if (!res.batch_symbol.empty()) ao.dims.values[res.batch_symbol] = batch;
    const std::shared_ptr<const Analysis> held =
        cache ? cache->analysis(model, ao.dims) : std::make_shared<const Analysis>(analyze(model, ao));
    const Analysis& a = *held;
    if (batch == batches.front()) {
      const auto& unknown = a.shapes.unknown_ops;
      const auto& warns = a.shapes.warnings;
      for (std::size_t i = 0; i < unknown.size() && i < kMaxListed; ++i) res.warnings.push_back("unknown op " + unknown[i] + ": not timed");
      if (unknown.size() > kMaxListed)
        res.warnings.push_back(std::to_string(unknown.size() - kMaxListed) + " more unknown op types: not timed");
      for (std::size_t i = 0; i < warns.size() && i < kMaxListed; ++i) res.warnings.push_back(warns[i].message);
      if (warns.size() > kMaxListed) res.warnings.push_back(std::to_string(warns.size() - kMaxListed) + " more warnings not listed");
      if (a.totals.estimated_values > 0)
        res.warnings.push_back(std::to_string(a.totals.estimated_values) +
                               " values have sizes that depend on the data (the first made by node " +
                               a.totals.first_estimate + "); they are taken at an upper bound, and so are "
                               "the costs, times and memory computed from them");
    }
    std::int64_t samples = res.batch_symbol.empty() ? 1 : batch;
    // What does not depend on the device (kernels, a graph's features) is prepared once per batch for
    // each (runtime, precision) in use and shared by every device and MIG slice.
    std::map<std::pair<std::string, Precision>, std::unique_ptr<Prepared>> prepared;
    auto prepared_for = [&](const std::string& runtime, Precision p) -> const Prepared& {
      auto key = std::make_pair(runtime, p);
      auto it = prepared.find(key);
      if (it == prepared.end())
        it = prepared.emplace(key, predictor.prepare(PredictorSubject{&model, &a, runtime, p, samples, opt.mode, opt.optimizer})).first;
      return *it->second;
    };
    // Memory likewise depends on the precision and runtime, not on the device.
    std::map<std::pair<std::string, Precision>, MemoryBreakdown> memories;
    auto memory_for = [&](const std::string& runtime, Precision p) -> const MemoryBreakdown& {
      if (cache) return cache->memory(a, p, opt.mode, opt.optimizer, constants.runtime(runtime));
      auto key = std::make_pair(runtime, p);
      auto it = memories.find(key);
      if (it == memories.end())
        it = memories.emplace(key, estimate_memory(model, a, p, opt.mode, opt.optimizer, constants.runtime(runtime))).first;
      return it->second;
    };
    // Each row first states what it asks (runtime, precision, threads); the predictor then answers the
    // devices of one prepared state together (a learned model in the page's other wasm module is reached
    // once, not once per device), and each row is completed.
    std::vector<DevicePrediction> asked(devices.size());
    std::vector<DeviceQuery> queries(devices.size());
    std::vector<const Prepared*> preps(devices.size());
    for (std::size_t i = 0; i < devices.size(); ++i) {
      const Device* d = devices[i];
      DevicePrediction& p = asked[i];
      p.device_id = d->id;
      p.device_name = d->name;
      p.batch = samples;
      p.runtime = d->is_gpu() ? opt.gpu_runtime : opt.cpu_runtime;
      if (!d->is_gpu()) {
        int cores = d->cores.present ? int(d->cores.value) : 0;
        p.threads = opt.cpu_threads > 0 && cores > 0 ? std::min(opt.cpu_threads, cores) : cores;
      }
      p.precision_requested = opt.precision.value_or(d->is_gpu() ? Precision::FP16 : Precision::FP32);
      p.precision_used = usable_precision(*d, p.precision_requested);
      if (p.precision_used != p.precision_requested)
        p.warnings.push_back(std::string(precision_name(p.precision_requested)) + " is not supported by " + d->id +
                             "; predicted at " + std::string(precision_name(p.precision_used)));
      preps[i] = &prepared_for(p.runtime, p.precision_used);
      DeviceQuery& query = queries[i];
      query = DeviceQuery{d, 1, 1, d->is_gpu() ? 0 : opt.cpu_threads, opt.keep_kernels};
      if (d->is_gpu() && p.runtime == kHostRuntime) {
        query.host_us = opt.host_us.value_or(-1);
        p.host_us = opt.host_us.value_or(constants.runtime(p.runtime).dispatch_us);
      }
    }
    std::vector<PredictorOutput> outs = predict_grouped(
        std::span<const Prepared* const>(preps), std::span<const DeviceQuery>(queries),
        [&](const Prepared* prep, std::span<const DeviceQuery> qs) { return predictor.predict_many(*prep, qs); });
    for (std::size_t row = 0; row < devices.size(); ++row) {
      const Device* d = devices[row];
      DevicePrediction& p = asked[row];
      const Prepared& prep = *preps[row];
      const DeviceQuery& query = queries[row];
      PredictorOutput& out = outs[row];
      widen_for_host(out, constants, p.runtime, opt.mode);
      if (opt.keep_features) {
        if (!feature_timer) feature_timer = std::make_unique<RooflinePredictor>(constants);
        p.features = feature_row(prep, query, *feature_timer);
      }
      p.latency_ms = out.latency_ms;
      p.busy_ms = out.busy_ms;
      p.busy_ms_by_phase = out.busy_ms_by_phase;
      p.baseline_ms = out.baseline_ms;
      p.throughput_per_s = p.latency_ms > 0 ? double(samples) / (p.latency_ms / 1e3) : 0;
      p.uncertainty = out.uncertainty;
      std::tie(p.band_low_ms, p.band_high_ms) = out.shown_band();
      p.band_coverage = out.band_coverage;
      p.out_of_distribution = out.out_of_distribution;
      p.ood_reasons = out.ood_reasons;
      p.kernels = std::move(out.kernels);
      for (auto& w : out.warnings) p.warnings.push_back(std::move(w));
      p.predictor = out.predictor.empty() ? predictor.name() : out.predictor;
      p.predictor_version = out.version.empty() ? predictor.version() : out.version;
      p.memory = memory_for(p.runtime, p.precision_used);
      if (!p.memory.complete)
        p.warnings.push_back("memory is a lower bound: some tensor sizes are unknown, or control-flow bodies hold "
                             "tensors the " + res.memory_protocol + " protocol does not count");
      p.device_memory_gb = d->memory_gb.present ? d->memory_gb.value : 0;
      p.fits = p.device_memory_gb <= 0 || p.memory.total() <= p.device_memory_gb * 1e9;
      if (auto power = predict_power_w(*d, constants.power, {out.busy_fraction, out.intensity, query.threads})) {
        p.power_w = *power;
        p.energy_j_per_sample = energy_j_per_sample(*power, p.latency_ms, double(samples));
        p.carbon_g_per_1000 = *p.energy_j_per_sample * 1000.0 / 3.6e6 * res.grid_g_per_kwh * res.pue;
      } else {
        p.warnings.push_back("no TDP or idle power for " + d->id + ": energy not predicted");
      }
      if (d->mig && d->is_gpu()) {
        const MigTable& t = *d->mig;
        // A slice is the same chip with a share of its compute and bandwidth: the roofline times it, and a
        // learned predictor's correction of the whole GPU (what it learned of this model on this runtime and
        // family: dispatch, library kernels) carries over. No learned predictor saw a slice; asking one
        // about features no row had would extrapolate, and cost a feature row and a model per slice.
        if (!slice_timer) slice_timer = std::make_unique<RooflinePredictor>(constants);
        const double correction = out.baseline_ms > 0 && out.latency_ms > 0 ? out.latency_ms / out.baseline_ms : 1.0;
        // Profiles that differ only in memory size (1g.10gb vs 1g.5gb+me) share their slices: time once.
        std::map<std::pair<int, int>, double> slice_latency;
        // The whole chip as one profile (7g) is the row's own device: the roofline timed it already (the
        // baseline), with the same query. A sixth of the slices' timings, which cost three times the rows'.
        if (out.baseline_ms > 0)
          slice_latency.emplace(std::make_pair(t.compute_slices_total, t.memory_slices_total), out.baseline_ms * correction);
        for (const auto& prof : t.profiles) {
          MigOption m;
          m.name = prof.name;
          m.memory_gb = prof.memory_gb;
          m.fits = p.memory.total() <= (1 - opt.mig_headroom) * prof.memory_gb * 1e9;
          auto slices = std::make_pair(prof.compute_slices, prof.memory_slices);
          auto cached = slice_latency.find(slices);
          if (cached == slice_latency.end()) {
            DeviceQuery slice{d, double(prof.compute_slices) / t.compute_slices_total,
                              double(prof.memory_slices) / t.memory_slices_total, 0, false, query.host_us};
            auto time = [&] { return slice_timer->predict(prep, slice).latency_ms; };
            // Kept with the open model for the next call (a catalog's devices only: --extra-devices makes
            // a catalog per call).
            const double roofline_ms =
                cache && !extra ? cache->slice_latency(a, {&constants.runtime(p.runtime), p.precision_used, opt.mode,
                                                           opt.optimizer, d, prof.compute_slices, prof.memory_slices,
                                                           query.host_us},
                                                       time)
                                : time();
            cached = slice_latency.emplace(slices, roofline_ms * correction).first;
          }
          m.latency_ms = cached->second;
          m.throughput_per_s = m.latency_ms > 0 ? double(samples) / (m.latency_ms / 1e3) : 0;
          m.meets_target = !opt.latency_target_ms || m.latency_ms <= *opt.latency_target_ms;
          m.instances = prof.max_instances;
          m.total_throughput_per_s = m.throughput_per_s * prof.max_instances;
          p.mig.push_back(m);
        }
        // The smallest profile (compute, then memory) that fits and meets the target.
        std::optional<std::size_t> best;
        for (std::size_t i = 0; i < p.mig.size(); ++i) {
          if (!p.mig[i].fits || !p.mig[i].meets_target) continue;
          const MigProfile& a1 = t.profiles[i];
          if (!best || a1.compute_slices < t.profiles[*best].compute_slices ||
              (a1.compute_slices == t.profiles[*best].compute_slices && a1.memory_gb < t.profiles[*best].memory_gb))
            best = i;
        }
        p.mig_recommended = best;
      }
      res.rows.push_back(std::move(p));
    }
  }
  return res;
}

std::string predict_to_json_text(const PredictResult& r, int indent) {
  // Keys in nlohmann::json's order (sorted), so that the text is what a dump of the tree would print.
  JsonWriter w(indent);
  w.begin_object();
  if (r.batch_symbol.empty()) w.key("batch_symbol").null();
  else w.field("batch_symbol", r.batch_symbol);
  w.key("carbon").begin_object().field("grid_g_per_kwh", r.grid_g_per_kwh).field("pue", r.pue).field("region", r.region_code).end();
  const bool training = r.memory_protocol == mode_name(Mode::Training);
  // The feature row's names in sorted order, once.
  const auto schema = feature_schema();
  std::vector<std::size_t> by_name(schema.size());
  for (std::size_t i = 0; i < by_name.size(); ++i) by_name[i] = i;
  std::sort(by_name.begin(), by_name.end(), [&](std::size_t a, std::size_t b) { return schema[a].name < schema[b].name; });
  auto number_or_null = [&](std::string_view k, const std::optional<double>& v) {
    if (v) w.field(k, *v);
    else w.key(k).null();
  };
  w.key("predictions").begin_array();
  for (const auto& p : r.rows) {
    w.begin_object();
    w.field("batch", p.batch);
    number_or_null("carbon_g_per_1000", p.carbon_g_per_1000);
    w.field("device", p.device_id);
    w.field("device_busy_ms", p.busy_ms);
    if (training)
      w.key("device_busy_ms_by_phase").begin_object().field("backward", p.busy_ms_by_phase[1])
          .field("forward", p.busy_ms_by_phase[0]).field("update", p.busy_ms_by_phase[2]).end();
    w.field("device_memory_gb", p.device_memory_gb);
    w.field("device_name", p.device_name);
    number_or_null("energy_j_per_sample", p.energy_j_per_sample);
    if (!p.features.empty()) {
      w.key("features").begin_object();
      for (std::size_t i : by_name)
        if (i < p.features.size()) {
          if (std::isnan(p.features[i])) w.key(schema[i].name).null();
          else w.field(schema[i].name, double(p.features[i]));
        }
      w.end();
    }
    w.field("fits", p.fits);
    w.field("host_bound", host_bound(p.busy_ms, p.latency_ms));
    number_or_null("host_us_per_kernel", p.host_us);
    if (!p.kernels.empty()) {
      w.key("kernels").begin_array();
      for (const auto& k : p.kernels)
        w.begin_object().field("bytes", k.bytes).field("class", op_class_name(k.cls))
            .field("compute_ms", k.compute_ms).field("flops", k.flops).field("memory_ms", k.memory_ms)
            .field("name", k.name).field("op_type", k.op_type).field("phase", kernel_phase_name(k.phase))
            .field("repeat", k.repeat).field("time_ms", k.time_ms).end();
      w.end();
    }
    if (p.band_coverage > 0) w.field("latency_band_coverage", p.band_coverage);
    else w.key("latency_band_coverage").null();
    w.key("latency_band_ms").begin_array().value(p.band_low_ms).value(p.band_high_ms).end();
    w.field("latency_ms", p.latency_ms);
    w.key("memory_mb").begin_object()
        .field("activations", p.memory.activations / kMiB).field("allocator", p.memory.allocator / kMiB)
        .field("context", p.memory.context / kMiB).field("gradients", p.memory.gradients / kMiB)
        .field("optimizer", p.memory.optimizer / kMiB).field("optimizer_update", p.memory.optimizer_update / kMiB)
        .field("saved_activations", p.memory.saved_activations / kMiB).field("weights", p.memory.weights / kMiB)
        .field("workspace", p.memory.workspace / kMiB).end();
    w.field("memory_protocol", r.memory_protocol);
    if (p.mig.empty()) {
      w.key("mig").null();
    } else {
      w.key("mig").begin_object().key("profiles").begin_array();
      for (const auto& m : p.mig)
        w.begin_object().field("fits", m.fits).field("instances", m.instances).field("latency_ms", m.latency_ms)
            .field("meets_target", m.meets_target).field("memory_gb", m.memory_gb).field("name", m.name)
            .field("throughput_per_s", m.throughput_per_s).field("total_throughput_per_s", m.total_throughput_per_s).end();
      w.end();
      if (p.mig_recommended) w.field("recommended", p.mig[*p.mig_recommended].name);
      else w.key("recommended").null();
      w.end();
    }
    w.key("ood_reasons").begin_array();
    for (OodReason why : p.ood_reasons) w.value(ood_reason_name(why));
    w.end();
    if (r.optimizer.empty()) w.key("optimizer").null();
    else w.field("optimizer", r.optimizer);
    w.field("out_of_distribution", p.out_of_distribution);
    w.field("peak_memory_mb", p.memory.total() / kMiB);
    number_or_null("power_w", p.power_w);
    w.field("precision", precision_name(p.precision_used));
    w.field("precision_requested", precision_name(p.precision_requested));
    w.key("predictor").begin_object();
    if (p.predictor == "roofline") w.key("baseline_latency_ms").null();
    else w.field("baseline_latency_ms", p.baseline_ms);
    w.field("name", p.predictor).field("requested", r.predictor_requested).field("version", p.predictor_version).end();
    w.field("runtime", p.runtime);
    if (p.device_id.empty() || p.threads == 0) w.key("threads").null();
    else w.field("threads", p.threads);
    w.field("throughput_per_s", p.throughput_per_s);
    w.field("uncertainty", p.uncertainty);
    w.field("warnings", p.warnings);
    w.end();
  }
  w.end();
  w.field("schema_version", kPredictSchemaVersion);
  w.field("warnings", r.warnings);
  w.end();
  return w.take();
}


}  // namespace perfcard
