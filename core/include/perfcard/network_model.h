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
  // The log correction decide() applies for this state and feature row, held to the training range.
  virtual double correction(const LearnedState& state, std::span<const float> row) const = 0;
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

// A network's verdict for one row: declined first where the domain says so, else its margin on the row
// (`margin`, called only then) corrected and judged by the training domain, flagged when the model has op
// types the network never saw (`network`: "the GNN").
Verdict network_verdict(const TrainingDomain& domain, const EmbeddedState& state, const RowQuery& query,
                        std::span<const float> row, const std::function<double()>& margin, std::string_view network);

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
