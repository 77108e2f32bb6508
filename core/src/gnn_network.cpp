#include "perfcard/gnn_network.h"

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>

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

namespace {

// Nodes whose states are equal at a layer, found as the Weisfeiler-Lehman refinement finds them: at the
// input, nodes of one op, class and feature row; a layer later, nodes of one class whose producers' classes
// and consumers' classes are the same multisets (a mean of equal multisets is equal). Repeated blocks (an
// LLM's decoder layers, a ResNet stage's bottlenecks, a NAS cell's copies) then cost one block's arithmetic.
// Class ids go by first occurrence, so a class's first node is its lowest-numbered one.
class Refinement {
 public:
  std::vector<std::int32_t> of;     // [nodes] the class of each node
  std::vector<std::int32_t> first;  // [classes] each class's first node

  // Starts a level; the next `nodes` add() calls give its nodes' keys in node order.
  void begin(std::size_t nodes) {
    ids_.clear();
    of.clear();
    first.clear();
    of.reserve(nodes);
  }
  void add(const std::string& key) {
    const auto [it, fresh] = ids_.try_emplace(key, std::int32_t(first.size()));
    if (fresh) first.push_back(std::int32_t(of.size()));
    of.push_back(it->second);
  }
  std::size_t classes() const { return first.size(); }

 private:
  std::unordered_map<std::string, std::int32_t> ids_;
};

template <class T>
void append_bytes(std::string& key, const T* v, std::size_t n) {
  key.append(reinterpret_cast<const char*>(v), n * sizeof(T));
}

// Each node's edges in, and out, in edge order (so a node's mean sums as the per-node pass sums it).
struct Adjacency {
  std::vector<std::int32_t> in_ptr, in_edge, out_ptr, out_edge;
  explicit Adjacency(const OperatorGraph& g) : in_ptr(g.nodes + 1, 0), out_ptr(g.nodes + 1, 0) {
    const std::size_t e = g.edge_src.size();
    for (std::size_t k = 0; k < e; ++k) {
      const auto s = g.edge_src[k], d = g.edge_dst[k];
      if (s < 0 || d < 0 || std::size_t(s) >= g.nodes || std::size_t(d) >= g.nodes)
        throw data_error("operator graph edge " + std::to_string(k) + " joins node " + std::to_string(s) + " to node " +
                         std::to_string(d) + "; the graph has " + std::to_string(g.nodes) + " nodes");
      ++in_ptr[std::size_t(d) + 1];
      ++out_ptr[std::size_t(s) + 1];
    }
    for (std::size_t i = 0; i < g.nodes; ++i) {
      in_ptr[i + 1] += in_ptr[i];
      out_ptr[i + 1] += out_ptr[i];
    }
    in_edge.resize(e);
    out_edge.resize(e);
    std::vector<std::int32_t> at_in(in_ptr.begin(), in_ptr.end() - 1), at_out(out_ptr.begin(), out_ptr.end() - 1);
    for (std::size_t k = 0; k < e; ++k) {
      in_edge[std::size_t(at_in[std::size_t(g.edge_dst[k])]++)] = std::int32_t(k);
      out_edge[std::size_t(at_out[std::size_t(g.edge_src[k])]++)] = std::int32_t(k);
    }
  }
};

// h + relu(self.w h + self.b + pred.w from_pred + succ.w from_succ)
template <class Layer>
nn::Tensor2 sage_layer(const Layer& L, nn::Tensor2 h, const nn::Tensor2& from_pred, const nn::Tensor2& from_succ,
                       nn::Path path) {
  nn::Tensor2 t = nn::linear(h, L.self_w->m, L.self_b, path);
  const nn::Tensor2 a = nn::linear(from_pred, L.pred_w->m, {}, path);
  const nn::Tensor2 b = nn::linear(from_succ, L.succ_w->m, {}, path);
  for (std::size_t k = 0; k < t.size(); ++k) t.data()[k] += a.data()[k] + b.data()[k];
  nn::relu(t.values());
  for (std::size_t k = 0; k < t.size(); ++k) h.data()[k] += t.data()[k];
  return h;
}

// [mean over the nodes | max over the nodes] of the last layer's states, one row per node.
nn::Tensor2 readout(const nn::Tensor2& h, nn::Path path) {
  const std::size_t H = h.cols();
  const std::vector<std::int32_t> one(h.rows(), 0);
  const nn::Tensor2 mean = nn::segment_reduce(h, one, 1, nn::Reduce::Mean, path);
  const nn::Tensor2 max = nn::segment_reduce(h, one, 1, nn::Reduce::Max, path);
  nn::Tensor2 out(1, 2 * H);
  std::copy(mean.values().begin(), mean.values().end(), out.row(0).begin());
  std::copy(max.values().begin(), max.values().end(), out.row(0).begin() + std::ptrdiff_t(H));
  return out;
}

}  // namespace

nn::Tensor2 GnnModel::embed(const OperatorGraph& g, nn::Path path) const {
  const Weights& w = *w_;
  if (g.features != w.node_features || g.x.size() != g.nodes * g.features || g.op.size() != g.nodes ||
      g.op_class.size() != g.nodes || g.edge_src.size() != g.edge_dst.size())
    throw data_error("the operator graph's arrays do not match its node count and the node feature schema");
  if (path == nn::Path::Reference || g.nodes == 0) return embed_each_node(g, path);
  const std::size_t n = g.nodes, F = g.features;
  const Adjacency adj(g);

  Refinement cls;
  std::string key;
  cls.begin(n);
  for (std::size_t i = 0; i < n; ++i) {
    key.clear();
    append_bytes(key, &g.op[i], 1);
    append_bytes(key, &g.op_class[i], 1);
    append_bytes(key, g.x.data() + i * F, F);
    cls.add(key);
  }
  nn::Tensor2 h = w.input->project(g.op, g.op_class, g.x, cls.first, cls.classes(), "operator graph node", path);
  nn::relu(h.values());

  std::vector<std::int32_t> prev, around, self_of, pred_rows, pred_seg, succ_rows, succ_seg;
  // The previous layer's classes of node i's producers (`in`) or consumers, in edge order.
  const auto neighbours = [&](std::size_t i, bool in, std::vector<std::int32_t>& out) {
    const auto& ptr = in ? adj.in_ptr : adj.out_ptr;
    const auto& edges = in ? adj.in_edge : adj.out_edge;
    const auto& other = in ? g.edge_src : g.edge_dst;
    out.clear();
    for (auto k = ptr[i]; k < ptr[i + 1]; ++k) out.push_back(prev[std::size_t(other[std::size_t(edges[std::size_t(k)])])]);
  };
  for (const auto& L : w.layers) {
    prev.swap(cls.of);  // the classes h's rows are of
    cls.begin(n);
    for (std::size_t i = 0; i < n; ++i) {
      key.clear();
      append_bytes(key, &prev[i], 1);
      for (const bool in : {true, false}) {
        neighbours(i, in, around);
        std::sort(around.begin(), around.end());
        const auto count = std::int32_t(around.size());
        append_bytes(key, &count, 1);
        append_bytes(key, around.data(), around.size());
      }
      cls.add(key);
    }
    // Each new class computed at its first node: its own state, and the means of its neighbours' states.
    const std::size_t u = cls.classes();
    self_of.resize(u);
    pred_rows.clear(), pred_seg.clear(), succ_rows.clear(), succ_seg.clear();
    for (std::size_t c = 0; c < u; ++c) {
      const auto i = std::size_t(cls.first[c]);
      self_of[c] = prev[i];
      for (const bool in : {true, false}) {
        neighbours(i, in, around);
        auto& rows = in ? pred_rows : succ_rows;
        rows.insert(rows.end(), around.begin(), around.end());
        (in ? pred_seg : succ_seg).resize(rows.size(), std::int32_t(c));
      }
    }
    nn::Tensor2 next = nn::gather_rows(h, self_of);
    h = sage_layer(L, std::move(next),
                   nn::segment_reduce(nn::gather_rows(h, pred_rows), pred_seg, u, nn::Reduce::Mean, path),
                   nn::segment_reduce(nn::gather_rows(h, succ_rows), succ_seg, u, nn::Reduce::Mean, path), path);
  }
  return readout(nn::gather_rows(h, cls.of), path);
}

nn::Tensor2 GnnModel::embed_each_node(const OperatorGraph& g, nn::Path path) const {
  const Weights& w = *w_;
  const std::size_t n = std::max<std::size_t>(g.nodes, 1);  // an empty graph embeds one zero node
  nn::Tensor2 h = w.input->project(g.op, g.op_class, g.x, 0, g.nodes, n, "operator graph node", path);
  nn::relu(h.values());
  for (const auto& L : w.layers) {
    // Mean of the producers' states at each consumer, and of the consumers' states at each producer.
    nn::Tensor2 from_pred = nn::segment_reduce(nn::gather_rows(h, g.edge_src), g.edge_dst, n, nn::Reduce::Mean, path);
    nn::Tensor2 from_succ = nn::segment_reduce(nn::gather_rows(h, g.edge_dst), g.edge_src, n, nn::Reduce::Mean, path);
    h = sage_layer(L, std::move(h), from_pred, from_succ, path);
  }
  return readout(h, path);
}

double GnnModel::head(const nn::Tensor2& e, std::span<const float> row, nn::Path path) const {
  return (*w_->head)(e, row, path, "GNN");
}

}  // namespace perfcard
