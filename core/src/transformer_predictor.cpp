#include "perfcard/transformer_predictor.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string_view>
#include <unordered_map>

#include "perfcard/error.h"
#include "perfcard/operator_graph.h"

namespace perfcard {

inline constexpr std::int64_t kTransformerVersion = 1;

using nn::OwnedMatrix;

struct TransformerModel::Weights {
  std::size_t width = 0, op_dim = 0, class_dim = 0, kernel_features = 0, row_features = 0, vocab = 0, classes = 0,
              window = 0;
  std::vector<float> emb_op, emb_class, kernel_mean, kernel_std, row_mean, row_std, in_b, pos, out_g, out_b, head_b1,
      head_b2;
  std::unique_ptr<OwnedMatrix> in_w, head_w1, head_w2;
  struct Block {
    std::vector<float> ln1_g, ln1_b, ln2_g, ln2_b, bq, bk, bv, bo, ff1_b, ff2_b;
    std::unique_ptr<OwnedMatrix> wq, wk, wv, wo, ff1_w, ff2_w;
    std::size_t heads = 1;
  };
  std::vector<Block> blocks;
};

namespace {

std::vector<float> vec(const WeightsFile& f, std::string_view name, std::int64_t n = -1) {
  auto v = nn::weight_vector(f, name, n);
  return {v.begin(), v.end()};
}

void require_cols(const nn::Matrix& m, std::size_t used) {
  if (m.cols() < used)
    throw data_error(m.describe() + " has " + std::to_string(m.cols()) + " input columns; its input has " +
                     std::to_string(used) + " values");
}

void require_positive(const std::vector<float>& v, std::string_view name) {
  for (float s : v)
    if (!(s > 0)) throw data_error(std::string(name) + " has a value that is not > 0");
}

}  // namespace

TransformerModel::TransformerModel(const WeightsFile& f) : w_(std::make_unique<Weights>()) {
  Weights& w = *w_;
  const TensorInfo& op = f.tensor("emb.op");
  const TensorInfo& cls = f.tensor("emb.class");
  if (op.dims.size() != 2 || cls.dims.size() != 2) throw data_error("emb.op and emb.class must be matrices");
  w.vocab = std::size_t(op.dims[0]);
  w.op_dim = std::size_t(op.dims[1]);
  w.classes = std::size_t(cls.dims[0]);
  w.class_dim = std::size_t(cls.dims[1]);
  if (w.vocab != op_vocabulary_size() || w.classes != op_class_count())
    throw data_error("emb.op / emb.class have " + std::to_string(w.vocab) + " / " + std::to_string(w.classes) +
                     " rows; this build has " + std::to_string(op_vocabulary_size()) + " op ids and " +
                     std::to_string(op_class_count()) + " classes");
  w.emb_op = op.to_f32();
  w.emb_class = cls.to_f32();
  w.kernel_features = kernel_feature_schema().size();
  w.row_features = feature_schema().size();
  w.kernel_mean = vec(f, "kernel.mean", std::int64_t(w.kernel_features));
  w.kernel_std = vec(f, "kernel.std", std::int64_t(w.kernel_features));
  w.row_mean = vec(f, "row.mean", std::int64_t(w.row_features));
  w.row_std = vec(f, "row.std", std::int64_t(w.row_features));
  require_positive(w.kernel_std, "kernel.std");
  require_positive(w.row_std, "row.std");
  w.in_b = vec(f, "in.b");
  w.width = w.in_b.size();
  const auto D = std::int64_t(w.width);
  if (D == 0) throw data_error("in.b is empty: the transformer has no width");
  w.in_w = std::make_unique<OwnedMatrix>(f, "in.w", D, -1);
  require_cols(w.in_w->m, w.op_dim + w.class_dim + w.kernel_features);
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
    b.ln1_g = vec(f, p + "ln1.g", D);
    b.ln1_b = vec(f, p + "ln1.b", D);
    b.ln2_g = vec(f, p + "ln2.g", D);
    b.ln2_b = vec(f, p + "ln2.b", D);
    b.wq = std::make_unique<OwnedMatrix>(f, p + "attn.q.w", D, D);
    b.wk = std::make_unique<OwnedMatrix>(f, p + "attn.k.w", D, D);
    b.wv = std::make_unique<OwnedMatrix>(f, p + "attn.v.w", D, D);
    b.wo = std::make_unique<OwnedMatrix>(f, p + "attn.o.w", D, D);
    b.bq = vec(f, p + "attn.q.b", D);
    b.bk = vec(f, p + "attn.k.b", D);
    b.bv = vec(f, p + "attn.v.b", D);
    b.bo = vec(f, p + "attn.o.b", D);
    b.ff1_b = vec(f, p + "ff1.b");
    b.ff1_w = std::make_unique<OwnedMatrix>(f, p + "ff1.w", std::int64_t(b.ff1_b.size()), D);
    b.ff2_w = std::make_unique<OwnedMatrix>(f, p + "ff2.w", D, std::int64_t(b.ff1_b.size()));
    b.ff2_b = vec(f, p + "ff2.b", D);
    w.blocks.push_back(std::move(b));
  }
  w.out_g = vec(f, "out.ln.g", D);
  w.out_b = vec(f, "out.ln.b", D);
  w.head_b1 = vec(f, "head.b1");
  w.head_w1 = std::make_unique<OwnedMatrix>(f, "head.w1", std::int64_t(w.head_b1.size()), -1);
  require_cols(w.head_w1->m, 2 * w.width + w.row_features);
  w.head_b2 = vec(f, "head.b2", 1);
  w.head_w2 = std::make_unique<OwnedMatrix>(f, "head.w2", 1, std::int64_t(w.head_b1.size()));
}

TransformerModel::~TransformerModel() = default;
TransformerModel::TransformerModel(TransformerModel&&) noexcept = default;
TransformerModel& TransformerModel::operator=(TransformerModel&&) noexcept = default;
std::size_t TransformerModel::window() const { return w_->window; }
nn::Storage TransformerModel::storage() const { return w_->in_w->m.storage(); }

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
  for (std::size_t i = 0; i < s.kernels; ++i)
    if (s.op[i] < 0 || std::size_t(s.op[i]) >= w.vocab || s.op_class[i] < 0 || std::size_t(s.op_class[i]) >= w.classes)
      throw data_error("kernel " + std::to_string(i) + " has op id " + std::to_string(s.op[i]) + " / class id " +
                       std::to_string(s.op_class[i]) + " outside the embeddings");

  // One window: its kernels' states after the last block, summed and maxed over the kernels.
  auto encode = [&](std::size_t lo, std::size_t hi, std::span<double> sum, std::span<float> max) {
    const std::size_t t = hi - lo;
    nn::Tensor2 x0(t, w.in_w->m.cols());
    for (std::size_t j = 0; j < t; ++j) {
      const std::size_t i = lo + j;
      auto r = x0.row(j);
      std::copy_n(w.emb_op.begin() + std::ptrdiff_t(std::size_t(s.op[i]) * w.op_dim), w.op_dim, r.begin());
      std::copy_n(w.emb_class.begin() + std::ptrdiff_t(std::size_t(s.op_class[i]) * w.class_dim), w.class_dim,
                  r.begin() + std::ptrdiff_t(w.op_dim));
      for (std::size_t k = 0; k < w.kernel_features; ++k)
        r[w.op_dim + w.class_dim + k] = (s.x[i * s.features + k] - w.kernel_mean[k]) / w.kernel_std[k];
    }
    nn::Tensor2 h = nn::linear(x0, w.in_w->m, w.in_b, path);
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
  const Weights& w = *w_;
  if (e.rows() != 1 || e.cols() != 2 * w.width || row.size() != w.row_features)
    throw data_error("the transformer head takes a [1, " + std::to_string(2 * w.width) + "] embedding and " +
                     std::to_string(w.row_features) + " features; got " + e.shape_string() + " and " +
                     std::to_string(row.size()));
  nn::Tensor2 z(1, w.head_w1->m.cols());
  std::copy(e.values().begin(), e.values().end(), z.row(0).begin());
  for (std::size_t k = 0; k < w.row_features; ++k)
    z(0, 2 * w.width + k) = std::isnan(row[k]) ? 0.0f : (row[k] - w.row_mean[k]) / w.row_std[k];
  nn::Tensor2 hid = nn::linear(z, w.head_w1->m, w.head_b1, path);
  nn::relu(hid.values());
  return double(nn::linear(hid, w.head_w2->m, w.head_b2, path)(0, 0));
}

TransformerPredictor::TransformerPredictor(const WeightsFile& f, std::shared_ptr<const RooflinePredictor> roofline)
    : roofline_(std::move(roofline)), model_([&]() -> const WeightsFile& {
        f.require_predictor("transformer", kTransformerVersion);
        f.require_schema_hash(feature_schema_hash());
        f.require_schema_hash(sequence_schema_hash(), "sequence_schema.hash");
        return f;
      }()),
      domain_(f, feature_schema().size()) {
  if (!roofline_) throw internal_error("the transformer predictor needs the roofline it corrects");
  version_ = "transformer-" + std::to_string(kTransformerVersion) + "." + std::string(f.get_string("training.date")) +
             "." + nn::storage_name(model_.storage());
}

std::unique_ptr<Prepared> TransformerPredictor::prepare(const PredictorSubject& s) const {
  const Embedder* self[] = {this};
  return prepare_learned(s, *roofline_, self);
}

void TransformerPredictor::embed_into(LearnedPrepared& p) const {
  if (p.sequence_embedding.size() > 0) return;
  const KernelSequence seq = kernel_sequence(*p.subject.model, p.plan, std::max<std::int64_t>(1, p.subject.samples));
  p.sequence_embedding = cache_.get(seq, [&](const KernelSequence& s) { return model_.embed(s); });
}

double TransformerPredictor::correction(const LearnedPrepared& p, std::span<const float> row) const {
  if (p.sequence_embedding.size() == 0)
    throw internal_error("the transformer was asked to predict on a state it did not embed");
  return domain_.held(model_.head(p.sequence_embedding, row));
}

PredictorOutput TransformerPredictor::predict(const Prepared& prepared, const DeviceQuery& q) const {
  const LearnedPrepared& p = as_learned_prepared(prepared, "transformer");
  if (p.sequence_embedding.size() == 0)
    throw internal_error("the transformer was asked to predict on a state it did not embed");
  RooflineResult r = roofline_->time(p, q);
  const std::vector<float> row = p.features.row(*q.device, q, r);
  PredictorOutput out = domain_.correct(std::move(r), model_.head(p.sequence_embedding, row), "the transformer's");
  out.predictor = name();
  out.version = version_;
  if (p.unknown_ops > 0) {
    out.out_of_distribution = true;
    out.warnings.push_back("out of distribution: " + std::to_string(p.unknown_ops) +
                           " nodes have op types the transformer has no embedding for");
  }
  std::string family;
  roofline_->constants().family_of(*q.device, &family);
  domain_.judge(family, row, {}, roofline_->uncertainty(*q.device, nullptr), out);
  return out;
}

}  // namespace perfcard
