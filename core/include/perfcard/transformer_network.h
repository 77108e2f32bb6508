// The transformer's network: a small pre-LayerNorm transformer over the kernel sequence (kernel_sequence.h)
// and the head that reads its pooled encoding beside a device's feature row. Layers and tensor names are
// described in scripts/training/transformer.py, which trains it; the arithmetic is the nn runtime's (nn.h).
// The model around it is learned_embedding.h.
//
// Long sequences (an LLM decoder runs thousands of kernels): attention is within windows of `window`
// consecutive kernels, so the cost grows linearly with the sequence; what a kernel's time depends on
// (fusion with its neighbours, what the previous kernel left in cache, launch gaps) is local, and the
// whole-model picture reaches the head through the pooled encoding and the roofline's summary in the
// feature row. Windows with equal inputs have equal outputs, so each distinct window is encoded once:
// the repeated blocks of a decoder cost one block's windows, exactly (no approximation).
#pragma once

#include <memory>
#include <span>
#include <string>

#include "perfcard/kernel_sequence.h"
#include "perfcard/networks.h"
#include "perfcard/nn.h"
#include "perfcard/weights_file.h"

namespace perfcard {

// The network alone: weights copied out of the file, forward passes on a kernel sequence and a feature row.
class TransformerModel final : public SequenceNetwork {
 public:
  explicit TransformerModel(const WeightsFile& file);
  ~TransformerModel();
  TransformerModel(TransformerModel&&) noexcept;
  TransformerModel& operator=(TransformerModel&&) noexcept;

  // [1, 2 * width]: the mean and the max over kernels of the last layer's states (zeros for no kernels).
  nn::Tensor2 embed(const KernelSequence& sequence, nn::Path path) const;
  nn::Tensor2 embed(const KernelSequence& sequence) const override { return embed(sequence, nn::Path::Fast); }
  // The predicted log ratio for one device's feature row (NaN entries read as the training mean).
  double head(const nn::Tensor2& embedding, std::span<const float> row, nn::Path path) const;
  double head(const nn::Tensor2& embedding, std::span<const float> row) const override {
    return head(embedding, row, nn::Path::Fast);
  }
  std::string storage() const override { return nn::storage_name(storage_type()); }
  // Distinct windows the last embed() of `sequence` would encode (the rest are repeats).
  std::size_t distinct_windows(const KernelSequence& sequence) const;
  std::size_t window() const;
  nn::Storage storage_type() const;

 private:
  struct Weights;
  std::unique_ptr<Weights> w_;
};

}  // namespace perfcard
