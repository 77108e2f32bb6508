// A learned predictor as the core sees it: the decisions it makes for one device row, apart from the
// roofline it corrects and the features it reads. The core times the roofline and builds the feature row,
// the operator graph and the kernel sequence (learned_predictor.h); the learned model reads them and answers
// with a Verdict: the roofline's row, or the roofline corrected by a factor, and in both cases the row's
// uncertainty and what it says about the row (out of distribution and why, a correction held back).
//
// Everything behind this interface (the weights file, the training domain, the trees and the networks, the
// ensemble's combination) is the learned library's (perfcard_networks): the CLI, the benchmarks and the tests
// compile it in (NativeLearned, native_learned.h); the page's first download does without it and fetches it
// as a second wasm module with the first weights file a prediction needs (wasm/learned/, glue in wasm/).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "perfcard/kernel_sequence.h"
#include "perfcard/operator_graph.h"
#include "perfcard/predictor.h"

namespace perfcard {

// One device row as the core computed it.
struct RowQuery {
  bool training_step = false;  // the subject is a training step (the roofline was not timed: roofline_ms = 0)
  bool host_given = false;     // the caller stated the host's time per kernel (DeviceQuery::host_us)
  std::string runtime, family, device_id;
  bool gpu = false;
  double roofline_ms = 0;      // the roofline's latency of the row
  double fallback = 0;         // the roofline's uncertainty for the device and runtime
};

// What a verdict says about the row, after the roofline's own warnings: an out-of-distribution flag (its
// reason set; the words follow "out of distribution: ") or a plain warning.
struct VerdictNote {
  std::optional<OodReason> reason;
  std::string words;
};

struct Verdict {
  bool roofline = false;      // the model declined the row: it is the roofline's own
  double correction = 0;      // otherwise: log(latency / the roofline's latency)
  double uncertainty = 0;     // the roofline's row: a factor on its uncertainty; otherwise the row's own
  double band_half = 0;       // a calibrated band: latency x exp(+-band_half) holds band_coverage of held-out rows
  double band_coverage = 0;   // 0 = no band
  std::vector<VerdictNote> notes;

  void flag(OodReason why, std::string words) { notes.push_back({why, std::move(words)}); }
  void warn(std::string words) { notes.push_back({std::nullopt, std::move(words)}); }
  bool flagged() const {
    return std::any_of(notes.begin(), notes.end(), [](const VerdictNote& n) { return n.reason.has_value(); });
  }
};

// The feature rows of a batch of device rows (features.h), back to back; none for a training step.
struct FeatureRows {
  std::span<const float> values;
  std::size_t width = 0;

  std::size_t size() const { return width ? values.size() / width : 0; }
  std::span<const float> operator[](std::size_t i) const {
    return width ? values.subspan(i * width, width) : std::span<const float>();
  }
  // The rows at `which`, back to back in `keep`, which holds them for as long as the result is read.
  FeatureRows only(std::span<const std::size_t> which, std::vector<float>& keep) const {
    bool every = which.size() == size();
    for (std::size_t i = 0; every && i < which.size(); ++i) every = which[i] == i;
    if (every) return *this;
    keep.clear();
    for (std::size_t i : which) keep.insert(keep.end(), (*this)[i].begin(), (*this)[i].end());
    return {keep, width};
  }
};

// What a model's device-independent state is made of (null / 0 where the model reads none of it).
struct ModelInputs {
  const OperatorGraph* graph = nullptr;
  const KernelSequence* sequence = nullptr;
  std::size_t unknown_ops = 0;  // the model's nodes of op types the registry does not know
};

// A learned model's state for one subject (the GNN's graph embedding, say), made once by prepare().
class LearnedState {
 public:
  virtual ~LearnedState() = default;
};

class LearnedModel {
 public:
  virtual ~LearnedModel() = default;
  virtual std::string name() const = 0;
  virtual std::string version() const = 0;
  // What prepare() reads: the operator graph, the kernel sequence.
  virtual bool reads_graph() const = 0;
  virtual bool reads_sequence() const = 0;
  virtual const TrainingAccuracy& training_accuracy() const = 0;
  // The subject's state. For a training step the core passes no inputs: every model declines it.
  virtual std::shared_ptr<const LearnedState> prepare(const ModelInputs& inputs) const = 0;
  // The verdicts on a batch of device rows of one subject, in the queries' order: `state` from this model's
  // prepare(), `rows` the queries' feature rows (none for a training step). A batch, so that a model in
  // another wasm module is reached once per prediction rather than once per device row.
  virtual std::vector<Verdict> decide(const LearnedState& state, std::span<const RowQuery> queries,
                                      FeatureRows rows) const = 0;
};

// What the core makes a model's inputs with: the roofline it corrects (an ensemble names the one it was
// fitted with) and the schema hash of each input it builds (features.h, operator_graph.h, kernel_sequence.h),
// which a weights file must have been trained on. The core states them: the learned side never builds an
// input, so it takes them from the one that does.
struct CoreSchemas {
  std::string roofline, features, graph, sequence;
};

class LearnedBackend {
 public:
  virtual ~LearnedBackend() = default;
  // The model a weights file holds, by its `predictor` key, after its format, name, version and schema
  // hashes are checked (the manifest check is the caller's). `loaded`: the models loaded so far, where an
  // ensemble finds its members.
  virtual std::shared_ptr<const LearnedModel> load(std::span<const std::uint8_t> bytes, const CoreSchemas& core,
                                                   std::span<const std::shared_ptr<const LearnedModel>> loaded) const = 0;
};

}  // namespace perfcard
