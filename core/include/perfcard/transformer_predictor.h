// The transformer predictor: a learned correction of the roofline, like the trees and the GNN, that reads
// the kernel sequence (kernel_sequence.h): the kernels the runtime runs, in order, after its fusion. A small
// pre-LayerNorm transformer encodes the sequence once per prepared subject; the GNN's head shape reads
// the pooled encoding beside the whole-model feature row of each device and predicts
// log(measured / roofline latency). Layers and tensor names are described in
// scripts/training/transformer.py, which trains it; the arithmetic is the nn runtime's (nn.h).
//
// Long sequences (an LLM decoder runs thousands of kernels): attention is within windows of `window`
// consecutive kernels, so the cost grows linearly with the sequence; what a kernel's time depends on
// (fusion with its neighbours, what the previous kernel left in cache, launch gaps) is local, and the
// whole-model picture reaches the head through the pooled encoding and the roofline's summary in the
// feature row. Windows with equal inputs have equal outputs, so each distinct window is encoded once:
// the repeated blocks of a decoder cost one block's windows, exactly (no approximation).
#pragma once

#include <memory>
#include <string>

#include "perfcard/features.h"
#include "perfcard/kernel_sequence.h"
#include "perfcard/learned_prepared.h"
#include "perfcard/nn.h"
#include "perfcard/roofline_predictor.h"
#include "perfcard/training_domain.h"
#include "perfcard/weights_file.h"

namespace perfcard {

// The network alone: weights copied out of the file, forward passes on a kernel sequence and a feature row.
class TransformerModel {
 public:
  explicit TransformerModel(const WeightsFile& file);
  ~TransformerModel();
  TransformerModel(TransformerModel&&) noexcept;
  TransformerModel& operator=(TransformerModel&&) noexcept;

  // [1, 2 * width]: the mean and the max over kernels of the last layer's states (zeros for no kernels).
  nn::Tensor2 embed(const KernelSequence& sequence, nn::Path path = nn::Path::Fast) const;
  // The predicted log ratio for one device's feature row (NaN entries read as the training mean).
  double head(const nn::Tensor2& embedding, std::span<const float> row, nn::Path path = nn::Path::Fast) const;
  // Distinct windows the last embed() of `sequence` would encode (the rest are repeats).
  std::size_t distinct_windows(const KernelSequence& sequence) const;
  std::size_t window() const;
  nn::Storage storage() const;

 private:
  struct Weights;
  std::unique_ptr<Weights> w_;
};

class TransformerPredictor final : public Predictor, public Embedder, public RooflineCorrection {
 public:
  // Checks the file's predictor name, version, feature and sequence schema hashes against this build.
  TransformerPredictor(const WeightsFile& file, std::shared_ptr<const RooflinePredictor> roofline);
  std::string name() const override { return "transformer"; }
  std::string version() const override { return version_; }
  std::unique_ptr<Prepared> prepare(const PredictorSubject& subject) const override;
  void embed_into(LearnedPrepared& p) const override;
  PredictorOutput predict(const Prepared& prepared, const DeviceQuery& query) const override;

  const std::map<std::string, FamilyAccuracy>& accuracy() const override { return domain_.accuracy(); }
  const TransformerModel& model() const { return model_; }
  // The log correction of the roofline predict() applies for this state and feature row, held to the
  // training range.
  double correction(const LearnedPrepared& p, std::span<const float> row) const override;

 private:
  std::shared_ptr<const RooflinePredictor> roofline_;
  TransformerModel model_;
  EmbeddingCache<KernelSequence> cache_;
  TrainingDomain domain_;
  std::string version_;
};

}  // namespace perfcard
