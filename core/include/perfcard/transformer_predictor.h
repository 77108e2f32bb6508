// The transformer predictor: a learned correction of the roofline, like the trees and the GNN, that reads
// the kernel sequence (kernel_sequence.h): the kernels the runtime runs, in order, after its fusion. Its
// network (transformer_network.h, reached through networks.h) encodes the sequence once per prepared
// subject; its head reads the pooled encoding beside the whole-model feature row of each device and
// predicts log(measured / roofline latency).
#pragma once

#include <memory>
#include <string>

#include "perfcard/features.h"
#include "perfcard/kernel_sequence.h"
#include "perfcard/learned_prepared.h"
#include "perfcard/networks.h"
#include "perfcard/roofline_predictor.h"
#include "perfcard/training_domain.h"
#include "perfcard/weights_file.h"

namespace perfcard {

class TransformerPredictor final : public Predictor, public Embedder, public RooflineCorrection {
 public:
  // Checks the file's predictor name, version, feature and sequence schema hashes against this build, then
  // has `networks` build the network.
  TransformerPredictor(const WeightsFile& file, std::shared_ptr<const RooflinePredictor> roofline,
                       const NetworkBackend& networks);
  std::string name() const override { return "transformer"; }
  std::string version() const override { return version_; }
  std::unique_ptr<Prepared> prepare(const PredictorSubject& subject) const override;
  void embed_into(LearnedPrepared& p) const override;
  PredictorOutput predict(const Prepared& prepared, const DeviceQuery& query) const override;

  const TrainingDomain* training_domain() const override { return &domain_; }
  const SequenceNetwork& network() const { return *network_; }
  // The log correction of the roofline predict() applies for this state and feature row, held to the
  // training range.
  double correction(const LearnedPrepared& p, std::span<const float> row) const override;

 private:
  std::shared_ptr<const RooflinePredictor> roofline_;
  std::shared_ptr<const SequenceNetwork> network_;
  EmbeddingCache<KernelSequence> cache_;
  TrainingDomain domain_;
  std::string version_;
};

}  // namespace perfcard
