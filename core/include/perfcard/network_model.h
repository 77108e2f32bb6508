// What the learned models share: the state of one that embeds the model (the GNN's graph embedding, the
// transformer's kernel-sequence one), the cache of recent embeddings, how a network's margin becomes a
// verdict, and the correction a combining model (the ensemble) takes from its members.
#pragma once

#include <cstddef>
#include <functional>
#include <list>
#include <mutex>
#include <span>
#include <string_view>
#include <utility>

#include "perfcard/learned_model.h"
#include "perfcard/nn.h"
#include "perfcard/training_domain.h"

namespace perfcard {

// A learned correction of the roofline that a combining model (the ensemble) takes from its members.
class RooflineCorrection {
 public:
  virtual ~RooflineCorrection() = default;
  // The log corrections decide() applies for this state and these feature rows, held to the training range.
  virtual std::vector<double> corrections(const LearnedState& state, FeatureRows rows) const = 0;
};

// The state of a model that reads the model's structure: its embedding (empty where it was given nothing
// to embed: a training step) and the count of nodes of op types no model has seen.
class EmbeddedState final : public LearnedState {
 public:
  nn::Tensor2 embedding;
  std::size_t unknown_ops = 0;
};

// The state as an EmbeddedState with an embedding, or Error(internal) (`network`: "GNN").
const nn::Tensor2& embedded(const LearnedState& state, std::string_view network);

// A network's verdicts on a batch of rows: the training domain's (TrainingDomain::verdicts, `margins` on
// the rows it does not decline), each corrected row flagged when the model has op types the network never
// saw (`network`: "the GNN").
std::vector<Verdict> network_verdicts(const TrainingDomain& domain, const EmbeddedState& state,
                                      std::span<const RowQuery> queries, FeatureRows rows,
                                      const std::function<std::vector<double>(FeatureRows)>& margins,
                                      std::string_view network);

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
