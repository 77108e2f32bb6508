// The prepared state the learned predictors share, and how the ones that embed the model fill it. The
// roofline's kernels and the feature builder come from FeaturePrepared; the GNN adds its graph embedding,
// the transformer its kernel-sequence embedding, each computed once per subject. Each embedder fills only
// its own part (embed_into), so the ensemble and auto prepare one state that every member reads, and no
// member embeds twice.
#pragma once

#include <limits>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <utility>

#include "perfcard/features.h"
#include "perfcard/nn.h"
#include "perfcard/roofline_predictor.h"

namespace perfcard {

class LearnedPrepared : public FeaturePrepared {
 public:
  // Counts the model's nodes of op types the registry does not know (the learned models never saw them).
  LearnedPrepared(PredictorSubject s, KernelPlan p);
  nn::Tensor2 graph_embedding;     // the GNN's; empty until it embedded this subject
  nn::Tensor2 sequence_embedding;  // the transformer's; likewise
  std::size_t unknown_ops = 0;
  // The ensemble's distance of the model's embedding from the training models' (the same for every device
  // and MIG slice, so measured once with the embeddings); NaN until the ensemble embedded this subject.
  double ensemble_distance = std::numeric_limits<double>::quiet_NaN();
};

// A learned predictor that reads the model itself, not only the feature row.
class Embedder {
 public:
  virtual ~Embedder() = default;
  // Fills this predictor's part of `p` when it is still empty.
  virtual void embed_into(LearnedPrepared& p) const = 0;
};

// A learned correction of the roofline that a combining predictor (the ensemble) takes from its members
// without timing the roofline once per member.
class RooflineCorrection {
 public:
  virtual ~RooflineCorrection() = default;
  // The log correction predict() applies to the roofline for this state and feature row, held to the
  // training range.
  virtual double correction(const LearnedPrepared& p, std::span<const float> row) const = 0;
};

// A fresh state for the subject on the roofline's plan, with every embedder's part filled.
std::unique_ptr<LearnedPrepared> prepare_learned(const PredictorSubject& subject, const RooflinePredictor& roofline,
                                                 std::span<const Embedder* const> embedders);

// The prepared state as a LearnedPrepared, or Error(internal) naming `who` when another predictor made it.
const LearnedPrepared& as_learned_prepared(const Prepared& p, std::string_view who);

// The embeddings of the last few inputs (operator graphs, kernel sequences), most recent first. The page
// re-predicts an open model on every setting change, for the table's batch and the sweep's 8: equal inputs
// are embedded once. A cache: it never changes a result.
template <class Input>
class EmbeddingCache {
 public:
  template <class Embed>
  nn::Tensor2 get(const Input& input, Embed&& embed) const {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (auto it = kept_.begin(); it != kept_.end(); ++it)
        if (it->first == input) {
          kept_.splice(kept_.begin(), kept_, it);
          return kept_.front().second;
        }
    }
    nn::Tensor2 e = embed(input);
    std::lock_guard<std::mutex> lock(mutex_);
    kept_.emplace_front(input, e);
    if (kept_.size() > kKept) kept_.pop_back();
    return e;
  }

 private:
  static constexpr std::size_t kKept = 12;  // a sweep's 8 batches and the table's, with room for a second model
  mutable std::mutex mutex_;
  mutable std::list<std::pair<Input, nn::Tensor2>> kept_;
};

}  // namespace perfcard
