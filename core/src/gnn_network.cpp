#include "perfcard/gnn_network.h"

#include <algorithm>
#include <optional>

#include "perfcard/error.h"
#include "perfcard/network_parts.h"

namespace perfcard {

using nn::OwnedMatrix;

struct GnnModel::Weights {
  std::size_t hidden = 0, node_features = 0;
  std::optional<InputLayer> input;
  std::optional<CorrectionHead> head;
  struct Layer {
    std::unique_ptr<OwnedMatrix> self_w, pred_w, succ_w;
    std::vector<float> self_b;
  };
  std::vector<Layer> layers;
};

GnnModel::GnnModel(const WeightsFile& f) : w_(std::make_unique<Weights>()) {
  Weights& w = *w_;
  w.node_features = node_feature_schema().size();
  w.input.emplace(f, "node", w.node_features);
  w.hidden = w.input->width();
  const std::int64_t layers = f.get_int("gnn.layers");
  if (layers < 0 || layers > 16) throw data_error("gnn.layers is " + std::to_string(layers) + "; expected 0..16");
  const auto H = std::int64_t(w.hidden);
  for (std::int64_t l = 0; l < layers; ++l) {
    const std::string p = "sage" + std::to_string(l) + ".";
    Weights::Layer L;
    L.self_w = std::make_unique<OwnedMatrix>(f, p + "self.w", H, H);
    L.pred_w = std::make_unique<OwnedMatrix>(f, p + "pred.w", H, H);
    L.succ_w = std::make_unique<OwnedMatrix>(f, p + "succ.w", H, H);
    L.self_b = weight_values(f, p + "self.b", H);
    w.layers.push_back(std::move(L));
  }
  w.head.emplace(f, 2 * w.hidden);
}

GnnModel::~GnnModel() = default;
GnnModel::GnnModel(GnnModel&&) noexcept = default;
GnnModel& GnnModel::operator=(GnnModel&&) noexcept = default;
std::size_t GnnModel::layers() const { return w_->layers.size(); }
nn::Storage GnnModel::storage_type() const { return w_->input->storage(); }

nn::Tensor2 GnnModel::embed(const OperatorGraph& g, nn::Path path) const {
  const Weights& w = *w_;
  if (g.features != w.node_features || g.x.size() != g.nodes * g.features || g.op.size() != g.nodes ||
      g.op_class.size() != g.nodes || g.edge_src.size() != g.edge_dst.size())
    throw data_error("the operator graph's arrays do not match its node count and the node feature schema");
  const std::size_t n = std::max<std::size_t>(g.nodes, 1);  // an empty graph embeds one zero node
  nn::Tensor2 h = w.input->project(g.op, g.op_class, g.x, 0, g.nodes, n, "operator graph node", path);
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
  return (*w_->head)(e, row, path, "GNN");
}

}  // namespace perfcard
