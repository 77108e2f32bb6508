// The transformer: a learned correction of the roofline, like the trees, that also reads the kernel
// sequence (kernel_sequence.h: the kernels the runtime runs, in order, after its fusion). Its network
// (transformer_network.h, reached through networks.h) encodes it once per prepared subject; its head reads
// the pooled encoding beside the whole-model feature row of each device and predicts log(measured / roofline
// latency).
#pragma once

#include <memory>
#include <span>
#include <string>

#include "perfcard/kernel_sequence.h"
#include "perfcard/learned_model.h"
#include "perfcard/network_model.h"
#include "perfcard/networks.h"
#include "perfcard/training_domain.h"
#include "perfcard/weights_file.h"

namespace perfcard {

class LearnedTransformer final : public LearnedModel, public RooflineCorrection {
 public:
  // Checks the file's predictor name, version, feature and sequence schema hashes (against the core's), then
  // has `networks` build the network.
  LearnedTransformer(const WeightsFile& file, const CoreSchemas& core, const NetworkBackend& networks);
  std::string name() const override { return "transformer"; }
  std::string version() const override { return version_; }
  bool reads_graph() const override { return false; }
  bool reads_sequence() const override { return true; }
  const TrainingAccuracy& training_accuracy() const override { return domain_.training_accuracy(); }
  // An EmbeddedState: the embedding of inputs.sequence (none without one).
  std::shared_ptr<const LearnedState> prepare(const ModelInputs& inputs) const override;
  Verdict decide(const LearnedState& state, const RowQuery& query, std::span<const float> row) const override;

  const SequenceNetwork& network() const { return *network_; }
  double correction(const LearnedState& state, std::span<const float> row) const override;

 private:
  std::shared_ptr<const SequenceNetwork> network_;
  EmbeddingCache<KernelSequence> cache_;
  TrainingDomain domain_;
  std::string version_;
};

}  // namespace perfcard
