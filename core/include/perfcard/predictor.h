// The interface every latency predictor implements. Work that does not depend on the device (forming
// kernels, embedding a graph, the model's features) is done once by prepare() for a (model, analysis,
// runtime, precision); predict() then answers one device (or MIG slice) cheaply from the prepared state.
// The roofline is one implementation; the learned predictors (trees, GNN, transformer, ensemble: one
// LearnedPredictor around each learned model, learned_predictor.h) are others, built from their weights
// files by name (predictor_registry.h).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "perfcard/analysis.h"
#include "perfcard/device.h"
#include "perfcard/error.h"
#include "perfcard/op_registry.h"
#include "perfcard/protocol.h"

namespace perfcard {

// Where in a run a kernel belongs: a training step adds the backward pass and the optimizer's update to
// the forward.
enum class KernelPhase : std::uint8_t { Forward, Backward, Update };
std::string_view kernel_phase_name(KernelPhase p);

// One kernel's share of a prediction (the breakdown charts): predictors that time kernels fill it.
struct KernelTime {
  std::string name;             // first node of the kernel (the optimizer's update: what the pass does)
  KernelPhase phase = KernelPhase::Forward;
  std::string op_type;
  OpClass cls = OpClass::Other;
  double flops = 0, bytes = 0;   // of one run
  double repeat = 1;             // runs in a row (recurrent time steps, loop iterations)
  double compute_ms = 0, memory_ms = 0;  // of one run
  double time_ms = 0;            // of every run together
  bool compute_bound = false;
};

// What prepare() was asked for; every prepared state carries it.
struct PredictorSubject {
  const Model* model = nullptr;
  const Analysis* analysis = nullptr;  // bound to the batch being predicted
  std::string runtime;
  Precision precision = Precision::FP16;
  std::int64_t samples = 1;            // the batch the analysis is bound to (1 when the graph fixes it)
  Mode mode = Mode::Inference;         // a training step times the backward and the update too
  Optimizer optimizer = Optimizer::Adam;
};

// A predictor's device-independent state for one subject. It refers to the model and the analysis,
// which must outlive it.
class Prepared {
 public:
  explicit Prepared(PredictorSubject s) : subject(std::move(s)) {}
  virtual ~Prepared() = default;
  PredictorSubject subject;
};

struct DeviceQuery {
  const Device* device = nullptr;
  double compute_scale = 1;     // MIG slice of compute
  double bandwidth_scale = 1;   // MIG slice of bandwidth
  int threads = 0;              // CPUs: runtime worker threads, 0 = every core
  bool keep_kernels = false;
  // The host's time per launched kernel the caller assumes (us), for the runtime whose latency it sets
  // (pytorch-eager); < 0: the runtime's fitted dispatch_us. Learned predictors decline a given one: their
  // rows ran on their own hosts.
  double host_us = -1;
};

// Why a row is out of distribution, for readers that act on it (the page, the reports); the warnings say it
// in words. Stable names (ood_reason_name) go into the JSON.
enum class OodReason : std::uint8_t {
  TrainingStep,       // the learned predictors trained on inference runs: the roofline predicts
  UntrainedRuntime,   // a runtime no training row ran on: the roofline predicts
  UntrainedFamily,    // no training row of the device's family
  NoHeldOutRows,      // the ensemble: no held-out rows of the family measure its error, the roofline predicts
  FeatureRange,       // a feature outside the training rows' range
  UnknownOps,         // op types the network has no embedding for
  EmbeddingDistance,  // the model's embedding far from every training model's
};
std::string_view ood_reason_name(OodReason r);

struct PredictorOutput {
  double latency_ms = 0;
  double uncertainty = 0;       // relative (0.2 = +-20%), from the predictor's measured held-out error
  double busy_fraction = 0;     // device busy time / latency (feeds the power model)
  double intensity = 0;         // how hard the busy device is pushed, 0..1
  double busy_ms = 0;           // device busy time
  std::array<double, 3> busy_ms_by_phase{};  // of busy_ms: forward, backward, update (KernelPhase order)
  double baseline_ms = 0;       // a learned predictor's physics baseline (the roofline) before correction
  // A calibrated band (the ensemble's): `band_coverage` of held-out rows were measured inside
  // [band_low_ms, band_high_ms]. 0 = none; the band shown is then latency / (1 + uncertainty) .. x (1 + uncertainty).
  double band_low_ms = 0, band_high_ms = 0, band_coverage = 0;
  bool out_of_distribution = false;  // set by flag(), with its reasons
  std::vector<OodReason> ood_reasons;
  std::string predictor, version;  // who made this row (a selecting predictor names the one it chose)
  std::vector<KernelTime> kernels;
  std::vector<std::string> warnings;  // out-of-distribution reasons included, in words

  // Flags the row out of distribution for `why`, said in `words` (a warning beginning "out of distribution: ").
  void flag(OodReason why, const std::string& words);
  // The learned predictor declined the row (a training step, a runtime it never trained on): the roofline's.
  bool declined() const;
  // The band a row shows, {low, high} in ms: the calibrated one where there is one, else from the uncertainty.
  std::pair<double, double> shown_band() const;
};

// Held-out accuracy of a learned predictor for one device family, as its file records it.
struct FamilyAccuracy {
  double mape = 0;
  std::int64_t rows = 0;
  bool beats_roofline = false;  // on the same held-out rows
};

// What a learned predictor's file says of its held-out accuracy: per device family on model families it
// never trained on (`families`), and on devices it never trained on (`unseen`, leave one device out).
struct TrainingAccuracy {
  std::map<std::string, FamilyAccuracy> families, unseen;
  std::vector<std::string> devices;  // trained on, sorted

  bool trained_on(const std::string& device_id) const;
  // The figure that says how the predictor does on `device` of `family`: held-out families on a device it
  // trained on, leave one device out on another; nullptr where the file measured neither.
  const FamilyAccuracy* accuracy_for(const std::string& family, const std::string& device_id) const;
  // Whether accuracy_for() beats the roofline for some family and device.
  bool beats_roofline_somewhere() const;
};

// Queries that differ in who answers them (the predictor chosen per device, the state prepared per runtime)
// answered a group at a time: answer(key, queries) once per distinct key, with its queries in order; the
// rows come back in the queries' order.
template <class Key, class Answer>
std::vector<PredictorOutput> predict_grouped(std::span<const Key> keys, std::span<const DeviceQuery> queries,
                                             Answer&& answer) {
  std::vector<PredictorOutput> out(queries.size());
  std::vector<bool> done(queries.size(), false);
  for (std::size_t i = 0; i < queries.size(); ++i) {
    if (done[i]) continue;
    std::vector<std::size_t> group;
    std::vector<DeviceQuery> asked;
    for (std::size_t j = i; j < queries.size(); ++j)
      if (keys[j] == keys[i]) group.push_back(j), asked.push_back(queries[j]), done[j] = true;
    std::vector<PredictorOutput> got = answer(keys[i], std::span<const DeviceQuery>(asked));
    if (got.size() != group.size())
      throw internal_error(std::to_string(got.size()) + " predictions for " + std::to_string(group.size()) +
                           " devices");
    for (std::size_t k = 0; k < group.size(); ++k) out[group[k]] = std::move(got[k]);
  }
  return out;
}

class Predictor {
 public:
  virtual ~Predictor() = default;
  virtual std::string name() const = 0;
  virtual std::string version() const = 0;
  virtual std::unique_ptr<Prepared> prepare(const PredictorSubject& subject) const = 0;
  // `prepared` must come from this predictor's prepare(); another's is refused (Error, internal).
  virtual PredictorOutput predict(const Prepared& prepared, const DeviceQuery& query) const = 0;
  // predict() of each query, in their order, at once: a learned model in the page's other wasm module is
  // then reached once for all the devices rather than once per device.
  virtual std::vector<PredictorOutput> predict_many(const Prepared& prepared, std::span<const DeviceQuery> queries) const;
  // What a learned predictor's file says of its held-out accuracy; nullptr for one that learned nothing (the
  // roofline) or that chooses among others.
  virtual const TrainingAccuracy* training_accuracy() const { return nullptr; }

  // Read from training_accuracy(), for "auto" and the reports; empty / nullptr / false without one.
  // Held-out accuracy per device family.
  const std::map<std::string, FamilyAccuracy>& accuracy() const;
  // What "auto" chooses by: the figure that fits this device (held-out families on a device the predictor
  // trained on, leave one device out on another); nullptr where none was measured.
  const FamilyAccuracy* accuracy_for(const std::string& family, const std::string& device_id) const;
  // Whether accuracy_for() beats the roofline for some family and device: a predictor that never does is
  // never chosen, so nothing is prepared for it.
  bool beats_roofline_somewhere() const;
};

}  // namespace perfcard
