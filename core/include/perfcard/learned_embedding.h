// The GNN and the transformer: learned corrections of the roofline, like the trees, that also read the
// model's structure. The GNN reads the operator graph (operator_graph.h), the transformer the kernel sequence
// (kernel_sequence.h: the kernels the runtime runs, in order, after its fusion). Each one's network
// (gnn_network.h, transformer_network.h, reached through networks.h) embeds its input once per prepared
// subject; its head reads that embedding beside the whole-model feature row of each device and predicts
// log(measured / roofline latency). One template: the two differ only in what they read (EmbeddingInput).
#pragma once

#include <memory>
#include <span>
#include <string>

#include "perfcard/kernel_sequence.h"
#include "perfcard/learned_model.h"
#include "perfcard/network_model.h"
#include "perfcard/networks.h"
#include "perfcard/operator_graph.h"
#include "perfcard/training_domain.h"
#include "perfcard/weights_file.h"

namespace perfcard {

template <class Input>
class LearnedEmbedding final : public LearnedModel, public RooflineCorrection {
 public:
  // Checks the file's predictor name, version, feature schema hash and its input's (against the core's),
  // then has `networks` build the network.
  LearnedEmbedding(const WeightsFile& file, const CoreSchemas& core, const NetworkBackend& networks);
  std::string name() const override;
  std::string version() const override { return version_; }
  bool reads_graph() const override;
  bool reads_sequence() const override { return !reads_graph(); }
  const TrainingAccuracy& training_accuracy() const override { return domain_.training_accuracy(); }
  // An EmbeddedState: the embedding of the input it reads (none without one).
  std::shared_ptr<const LearnedState> prepare(const ModelInputs& inputs) const override;
  std::vector<Verdict> decide(const LearnedState& state, std::span<const RowQuery> queries,
                              FeatureRows rows) const override;

  const EmbeddingNetwork<Input>& network() const { return *network_; }
  std::vector<double> corrections(const LearnedState& state, FeatureRows rows) const override;

 private:
  std::shared_ptr<const EmbeddingNetwork<Input>> network_;
  EmbeddingCache<Input> cache_;
  TrainingDomain domain_;
  std::string version_;
  std::vector<double> margins(const LearnedState& state, FeatureRows rows) const;
};

using LearnedGnn = LearnedEmbedding<OperatorGraph>;
using LearnedTransformer = LearnedEmbedding<KernelSequence>;

extern template class LearnedEmbedding<OperatorGraph>;
extern template class LearnedEmbedding<KernelSequence>;

}  // namespace perfcard
