#include "perfcard/gnn_predictor.h"

#include <algorithm>
#include <cmath>

#include "perfcard/error.h"
#include "perfcard/features.h"

namespace perfcard {

inline constexpr std::int64_t kGnnVersion = 1;

using nn::OwnedMatrix;

struct GnnModel::Weights {
  std::size_t hidden = 0, op_dim = 0, class_dim = 0, node_features = 0, row_features = 0, vocab = 0, classes = 0;
  std::vector<float> emb_op, emb_class, node_mean, node_std, row_mean, row_std, in_b, head_b1, head_b2;
  std::unique_ptr<OwnedMatrix> in_w, head_w1, head_w2;
  struct Layer {
    std::unique_ptr<OwnedMatrix> self_w, pred_w, succ_w;
    std::vector<float> self_b;
  };
  std::vector<Layer> layers;
};

namespace {

std::vector<float> vec(const WeightsFile& f, std::string_view name, std::int64_t n = -1) {
  auto v = nn::weight_vector(f, name, n);
  return {v.begin(), v.end()};
}

// The columns a padded input of `used` values needs: the matrix's, which must hold them all.
void require_cols(const nn::Matrix& m, std::size_t used) {
  if (m.cols() < used)
    throw data_error(m.describe() + " has " + std::to_string(m.cols()) + " input columns; its input has " +
                     std::to_string(used) + " values");
}

}  // namespace

GnnModel::GnnModel(const WeightsFile& f) : w_(std::make_unique<Weights>()) {
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
  w.node_features = node_feature_schema().size();
  w.row_features = feature_schema().size();
  w.node_mean = vec(f, "node.mean", std::int64_t(w.node_features));
  w.node_std = vec(f, "node.std", std::int64_t(w.node_features));
  w.row_mean = vec(f, "row.mean", std::int64_t(w.row_features));
  w.row_std = vec(f, "row.std", std::int64_t(w.row_features));
  w.in_b = vec(f, "in.b");
  w.hidden = w.in_b.size();
  w.in_w = std::make_unique<OwnedMatrix>(f, "in.w", std::int64_t(w.hidden), -1);
  require_cols(w.in_w->m, w.op_dim + w.class_dim + w.node_features);
  const std::int64_t layers = f.get_int("gnn.layers");
  if (layers < 0 || layers > 16) throw data_error("gnn.layers is " + std::to_string(layers) + "; expected 0..16");
  const auto H = std::int64_t(w.hidden);
  for (std::int64_t l = 0; l < layers; ++l) {
    const std::string p = "sage" + std::to_string(l) + ".";
    Weights::Layer L;
    L.self_w = std::make_unique<OwnedMatrix>(f, p + "self.w", H, H);
    L.pred_w = std::make_unique<OwnedMatrix>(f, p + "pred.w", H, H);
    L.succ_w = std::make_unique<OwnedMatrix>(f, p + "succ.w", H, H);
    L.self_b = vec(f, p + "self.b", H);
    w.layers.push_back(std::move(L));
  }
  w.head_b1 = vec(f, "head.b1");
  w.head_w1 = std::make_unique<OwnedMatrix>(f, "head.w1", std::int64_t(w.head_b1.size()), -1);
  require_cols(w.head_w1->m, 2 * w.hidden + w.row_features);
  w.head_b2 = vec(f, "head.b2", 1);
  w.head_w2 = std::make_unique<OwnedMatrix>(f, "head.w2", 1, std::int64_t(w.head_b1.size()));
  for (float s : w.node_std)
    if (!(s > 0)) throw data_error("node.std has a value that is not > 0");
  for (float s : w.row_std)
    if (!(s > 0)) throw data_error("row.std has a value that is not > 0");
}

GnnModel::~GnnModel() = default;
GnnModel::GnnModel(GnnModel&&) noexcept = default;
GnnModel& GnnModel::operator=(GnnModel&&) noexcept = default;
std::size_t GnnModel::layers() const { return w_->layers.size(); }
nn::Storage GnnModel::storage() const { return w_->in_w->m.storage(); }

nn::Tensor2 GnnModel::embed(const OperatorGraph& g, nn::Path path) const {
  const Weights& w = *w_;
  if (g.features != w.node_features || g.x.size() != g.nodes * g.features || g.op.size() != g.nodes ||
      g.op_class.size() != g.nodes || g.edge_src.size() != g.edge_dst.size())
    throw data_error("the operator graph's arrays do not match its node count and the node feature schema");
  const std::size_t n = std::max<std::size_t>(g.nodes, 1);  // an empty graph embeds one zero node
  nn::Tensor2 x0(n, w.in_w->m.cols());
  for (std::size_t i = 0; i < g.nodes; ++i) {
    const auto op = std::size_t(g.op[i]), cls = std::size_t(g.op_class[i]);
    if (g.op[i] < 0 || op >= w.vocab || g.op_class[i] < 0 || cls >= w.classes)
      throw data_error("operator graph node " + std::to_string(i) + " has op id " + std::to_string(g.op[i]) +
                       " / class id " + std::to_string(g.op_class[i]) + " outside the embeddings");
    auto r = x0.row(i);
    std::copy_n(w.emb_op.begin() + std::ptrdiff_t(op * w.op_dim), w.op_dim, r.begin());
    std::copy_n(w.emb_class.begin() + std::ptrdiff_t(cls * w.class_dim), w.class_dim, r.begin() + std::ptrdiff_t(w.op_dim));
    for (std::size_t k = 0; k < w.node_features; ++k)
      r[w.op_dim + w.class_dim + k] = (g.x[i * g.features + k] - w.node_mean[k]) / w.node_std[k];
  }
  nn::Tensor2 h = nn::linear(x0, w.in_w->m, w.in_b, path);
  nn::relu(h.values());
  for (const auto& L : w.layers) {
    // Mean of the producers' states at each consumer, and of the consumers' states at each producer.
    const nn::Tensor2 from_pred = nn::segment_reduce(nn::gather_rows(h, g.edge_src), g.edge_dst, n, nn::Reduce::Mean, path);
    const nn::Tensor2 from_succ = nn::segment_reduce(nn::gather_rows(h, g.edge_dst), g.edge_src, n, nn::Reduce::Mean, path);
    nn::Tensor2 t = nn::linear(h, L.self_w->m, L.self_b, path);
    const nn::Tensor2 a = nn::linear(from_pred, L.pred_w->m, {}, path);
    const nn::Tensor2 b = nn::linear(from_succ, L.succ_w->m, {}, path);
    for (std::size_t k = 0; k < t.size(); ++k) t.data()[k] += a.data()[k] + b.data()[k];
    nn::relu(t.values());
    for (std::size_t k = 0; k < t.size(); ++k) h.data()[k] += t.data()[k];
  }
  const std::vector<std::int32_t> one(n, 0);
  const nn::Tensor2 mean = nn::segment_reduce(h, one, 1, nn::Reduce::Mean, path);
  const nn::Tensor2 max = nn::segment_reduce(h, one, 1, nn::Reduce::Max, path);
  nn::Tensor2 out(1, 2 * w.hidden);
  std::copy(mean.values().begin(), mean.values().end(), out.row(0).begin());
  std::copy(max.values().begin(), max.values().end(), out.row(0).begin() + std::ptrdiff_t(w.hidden));
  return out;
}

double GnnModel::head(const nn::Tensor2& e, std::span<const float> row, nn::Path path) const {
  const Weights& w = *w_;
  if (e.rows() != 1 || e.cols() != 2 * w.hidden || row.size() != w.row_features)
    throw data_error("the GNN head takes a [1, " + std::to_string(2 * w.hidden) + "] embedding and " +
                     std::to_string(w.row_features) + " features; got " + e.shape_string() + " and " +
                     std::to_string(row.size()));
  nn::Tensor2 z(1, w.head_w1->m.cols());
  std::copy(e.values().begin(), e.values().end(), z.row(0).begin());
  for (std::size_t k = 0; k < w.row_features; ++k)
    z(0, 2 * w.hidden + k) = std::isnan(row[k]) ? 0.0f : (row[k] - w.row_mean[k]) / w.row_std[k];
  nn::Tensor2 hid = nn::linear(z, w.head_w1->m, w.head_b1, path);
  nn::relu(hid.values());
  return double(nn::linear(hid, w.head_w2->m, w.head_b2, path)(0, 0));
}

GnnPredictor::GnnPredictor(const WeightsFile& f, std::shared_ptr<const RooflinePredictor> roofline)
    : roofline_(std::move(roofline)), model_([&]() -> const WeightsFile& {
        f.require_predictor("gnn", kGnnVersion);
        f.require_schema_hash(feature_schema_hash());
        f.require_schema_hash(graph_schema_hash(), "graph_schema.hash");
        return f;
      }()),
      domain_(f, feature_schema().size()) {
  if (!roofline_) throw internal_error("the gnn predictor needs the roofline it corrects");
  version_ = "gnn-" + std::to_string(kGnnVersion) + "." + std::string(f.get_string("training.date")) + "." +
             nn::storage_name(model_.storage());
}

std::unique_ptr<Prepared> GnnPredictor::prepare(const PredictorSubject& s) const {
  const Embedder* self[] = {this};
  return prepare_learned(s, *roofline_, self);
}

void GnnPredictor::embed_into(LearnedPrepared& p) const {
  if (p.graph_embedding.size() > 0) return;
  const PredictorSubject& s = p.subject;
  const OperatorGraph g = operator_graph(*s.model, *s.analysis, std::max<std::int64_t>(1, s.samples));
  p.graph_embedding = cache_.get(g, [&](const OperatorGraph& graph) { return model_.embed(graph); });
}

double GnnPredictor::correction(const LearnedPrepared& p, std::span<const float> row) const {
  if (p.graph_embedding.size() == 0) throw internal_error("the GNN was asked to predict on a state it did not embed");
  return domain_.held(model_.head(p.graph_embedding, row));
}

PredictorOutput GnnPredictor::predict(const Prepared& prepared, const DeviceQuery& q) const {
  const LearnedPrepared& p = as_learned_prepared(prepared, "gnn");
  if (p.graph_embedding.size() == 0) throw internal_error("the GNN was asked to predict on a state it did not embed");
  RooflineResult r = roofline_->time(p, q);
  const std::vector<float> row = p.features.row(*q.device, q, r);
  const double margin = model_.head(p.graph_embedding, row);
  PredictorOutput out = domain_.correct(std::move(r), margin, "the GNN's");
  out.predictor = name();
  out.version = version_;
  if (p.unknown_ops > 0) {
    out.out_of_distribution = true;
    out.warnings.push_back("out of distribution: " + std::to_string(p.unknown_ops) +
                           " nodes have op types the GNN has no embedding for");
  }
  std::string family;
  roofline_->constants().family_of(*q.device, &family);
  domain_.judge(family, row, {}, roofline_->uncertainty(*q.device, nullptr), out);
  return out;
}

}  // namespace perfcard
