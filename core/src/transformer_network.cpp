#include "perfcard/transformer_network.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "perfcard/error.h"
#include "perfcard/network_parts.h"
#include "perfcard/operator_graph.h"

namespace perfcard {

using nn::OwnedMatrix;

struct TransformerModel::Weights {
  std::size_t width = 0, kernel_features = 0, window = 0;
  std::optional<InputLayer> input;
  std::optional<CorrectionHead> head;
  std::vector<float> pos, out_g, out_b;
  struct Block {
    std::vector<float> ln1_g, ln1_b, ln2_g, ln2_b, bq, bk, bv, bo, ff1_b, ff2_b;
    std::unique_ptr<OwnedMatrix> wq, wk, wv, wo, ff1_w, ff2_w;
    std::size_t heads = 1;
  };
  std::vector<Block> blocks;
};

TransformerModel::TransformerModel(const WeightsFile& f) : w_(std::make_unique<Weights>()) {
  Weights& w = *w_;
  w.kernel_features = kernel_feature_schema().size();
  w.input.emplace(f, "kernel", w.kernel_features);
  w.width = w.input->width();
  const auto D = std::int64_t(w.width);
  if (D == 0) throw data_error("in.b is empty: the transformer has no width");
  const std::int64_t window = f.get_int("transformer.window");
  if (window < 1 || window > 4096) throw data_error("transformer.window is " + std::to_string(window) + "; expected 1..4096");
  w.window = std::size_t(window);
  const TensorInfo& pos = f.tensor("pos", WDType::F32, {window, D});
  w.pos = pos.to_f32();
  const std::int64_t layers = f.get_int("transformer.layers");
  if (layers < 0 || layers > 16) throw data_error("transformer.layers is " + std::to_string(layers) + "; expected 0..16");
  const std::int64_t heads = f.get_int("transformer.heads");
  if (heads < 1 || D % heads != 0)
    throw data_error("transformer.heads is " + std::to_string(heads) + "; it must divide the width " + std::to_string(D));
  for (std::int64_t l = 0; l < layers; ++l) {
    const std::string p = "block" + std::to_string(l) + ".";
    Weights::Block b;
    b.heads = std::size_t(heads);
    b.ln1_g = weight_values(f, p + "ln1.g", D);
    b.ln1_b = weight_values(f, p + "ln1.b", D);
    b.ln2_g = weight_values(f, p + "ln2.g", D);
    b.ln2_b = weight_values(f, p + "ln2.b", D);
    b.wq = std::make_unique<OwnedMatrix>(f, p + "attn.q.w", D, D);
    b.wk = std::make_unique<OwnedMatrix>(f, p + "attn.k.w", D, D);
    b.wv = std::make_unique<OwnedMatrix>(f, p + "attn.v.w", D, D);
    b.wo = std::make_unique<OwnedMatrix>(f, p + "attn.o.w", D, D);
    b.bq = weight_values(f, p + "attn.q.b", D);
    b.bk = weight_values(f, p + "attn.k.b", D);
    b.bv = weight_values(f, p + "attn.v.b", D);
    b.bo = weight_values(f, p + "attn.o.b", D);
    b.ff1_b = weight_values(f, p + "ff1.b");
    b.ff1_w = std::make_unique<OwnedMatrix>(f, p + "ff1.w", std::int64_t(b.ff1_b.size()), D);
    b.ff2_w = std::make_unique<OwnedMatrix>(f, p + "ff2.w", D, std::int64_t(b.ff1_b.size()));
    b.ff2_b = weight_values(f, p + "ff2.b", D);
    w.blocks.push_back(std::move(b));
  }
  w.out_g = weight_values(f, "out.ln.g", D);
  w.out_b = weight_values(f, "out.ln.b", D);
  w.head.emplace(f, 2 * w.width);
}

TransformerModel::~TransformerModel() = default;
TransformerModel::TransformerModel(TransformerModel&&) noexcept = default;
TransformerModel& TransformerModel::operator=(TransformerModel&&) noexcept = default;
std::size_t TransformerModel::window() const { return w_->window; }
nn::Storage TransformerModel::storage_type() const { return w_->input->storage(); }

namespace {

void check(const KernelSequence& s, std::size_t features) {
  if (s.features != features || s.x.size() != s.kernels * s.features || s.op.size() != s.kernels ||
      s.op_class.size() != s.kernels)
    throw data_error("the kernel sequence's arrays do not match its kernel count and the kernel feature schema");
}

// The bytes of window [lo, hi): its ops, classes and features. Equal keys, equal inputs, equal outputs.
std::string window_key(const KernelSequence& s, std::size_t lo, std::size_t hi) {
  std::string key;
  key.reserve((hi - lo) * (8 + 4 * s.features));
  key.append(reinterpret_cast<const char*>(s.op.data() + lo), (hi - lo) * sizeof(std::int32_t));
  key.append(reinterpret_cast<const char*>(s.op_class.data() + lo), (hi - lo) * sizeof(std::int32_t));
  key.append(reinterpret_cast<const char*>(s.x.data() + lo * s.features), (hi - lo) * s.features * sizeof(float));
  return key;
}

}  // namespace

std::size_t TransformerModel::distinct_windows(const KernelSequence& s) const {
  check(s, w_->kernel_features);
  std::unordered_map<std::string, int> seen;
  for (std::size_t lo = 0; lo < s.kernels; lo += w_->window)
    seen.emplace(window_key(s, lo, std::min(s.kernels, lo + w_->window)), 0);
  return seen.size();
}

nn::Tensor2 TransformerModel::embed(const KernelSequence& s, nn::Path path) const {
  const Weights& w = *w_;
  check(s, w.kernel_features);
  const std::size_t D = w.width;
  nn::Tensor2 out(1, 2 * D);
  if (s.kernels == 0) return out;

  // One window: its kernels' states after the last block, summed and maxed over the kernels.
  auto encode = [&](std::size_t lo, std::size_t hi, std::span<double> sum, std::span<float> max) {
    const std::size_t t = hi - lo;
    nn::Tensor2 h = w.input->project(s.op, s.op_class, s.x, lo, hi, t, "kernel", path);
    for (std::size_t j = 0; j < t; ++j)
      for (std::size_t c = 0; c < D; ++c) h(j, c) += w.pos[j * D + c];
    for (const auto& b : w.blocks) {
      const nn::Tensor2 a = nn::self_attention(nn::layer_norm(h, b.ln1_g, b.ln1_b, 1e-5f, path),
                                               {b.wq->m, b.wk->m, b.wv->m, b.wo->m, b.bq, b.bk, b.bv, b.bo, b.heads},
                                               false, path);
      for (std::size_t k = 0; k < h.size(); ++k) h.data()[k] += a.data()[k];
      nn::Tensor2 f = nn::linear(nn::layer_norm(h, b.ln2_g, b.ln2_b, 1e-5f, path), b.ff1_w->m, b.ff1_b, path);
      nn::gelu_tanh(f.values());
      const nn::Tensor2 g = nn::linear(f, b.ff2_w->m, b.ff2_b, path);
      for (std::size_t k = 0; k < h.size(); ++k) h.data()[k] += g.data()[k];
    }
    const nn::Tensor2 y = nn::layer_norm(h, w.out_g, w.out_b, 1e-5f, path);
    for (std::size_t j = 0; j < t; ++j)
      for (std::size_t c = 0; c < D; ++c) {
        sum[c] += double(y(j, c));
        max[c] = std::max(max[c], y(j, c));
      }
  };

  struct Encoded {
    std::vector<double> sum;
    std::vector<float> max;
  };
  std::unordered_map<std::string, Encoded> done;
  std::vector<double> total(D, 0.0);
  std::vector<float> max(D, -std::numeric_limits<float>::infinity());
  for (std::size_t lo = 0; lo < s.kernels; lo += w.window) {
    const std::size_t hi = std::min(s.kernels, lo + w.window);
    auto [it, fresh] = done.try_emplace(window_key(s, lo, hi));
    Encoded& e = it->second;
    if (fresh) {
      e.sum.assign(D, 0.0);
      e.max.assign(D, -std::numeric_limits<float>::infinity());
      encode(lo, hi, e.sum, e.max);
    }
    for (std::size_t c = 0; c < D; ++c) {
      total[c] += e.sum[c];
      max[c] = std::max(max[c], e.max[c]);
    }
  }
  for (std::size_t c = 0; c < D; ++c) {
    out(0, c) = float(total[c] / double(s.kernels));
    out(0, D + c) = max[c];
  }
  return out;
}

double TransformerModel::head(const nn::Tensor2& e, std::span<const float> row, nn::Path path) const {
  return (*w_->head)(e, row, path, "transformer");
}

}  // namespace perfcard
