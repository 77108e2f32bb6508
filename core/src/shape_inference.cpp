// The inference walk: seeds graph inputs (binding symbolic dims), initializers and outer-scope values,
// then applies each node's rule in execution order. Rules live in ops/ and are found via the registry.
#include "perfcard/shape_inference.h"

#include <algorithm>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_set>

#include "perfcard/op_registry.h"

namespace perfcard {

SharedConst::SharedConst(ConstData d) : block_(new Block{std::move(d), 1}) {}
SharedConst::SharedConst(const SharedConst& o) : block_(o.block_) {
  if (block_) ++block_->refs;
}
SharedConst::~SharedConst() {
  if (block_ && --block_->refs == 0) delete block_;
}


bool ValueShape::fully_known() const {
  if (rank < 0) return false;
  for (auto d : dims)
    if (d < 0) return false;
  return true;
}

std::uint64_t ValueShape::elements() const {
  if (!fully_known()) return 0;
  std::uint64_t n = 1;
  for (auto d : dims) n *= std::uint64_t(d);
  return n;
}

std::uint64_t ValueShape::bytes() const { return (elements() * std::uint64_t(dtype_bits(dtype)) + 7) / 8; }

namespace {

constexpr std::uint64_t kMaxElements = std::uint64_t{1} << 50;  // beyond any real tensor
constexpr int kMaxRank = 64;                                      // as the loader's default limit

// Every shape that enters the walk or leaves a rule is checked, so that rules can do arithmetic on dims
// (products of any of them) without overflow, and fold contents without reading past them.
// Returns what is wrong ("" when nothing is), so that the hot path builds no message or location.
std::string shape_problem(ValueShape& s) {
  if (s.rank > kMaxRank)
    return " would have rank " + std::to_string(s.rank) + ", above the limit of " + std::to_string(kMaxRank);
  std::uint64_t e = 1;
  for (auto d : s.dims) {
    if (d < -1) return " would have a negative dim (" + std::to_string(d) + ")";
    if (d <= 0) continue;
    if (e > kMaxElements / std::uint64_t(d)) return " would have more than 2^50 elements";
    e *= std::uint64_t(d);
  }
  if (s.value && (!s.fully_known() || s.value->size() != s.elements())) s.value.reset();  // inconsistent: drop
  return {};
}

void check_shape(ValueShape& s, const std::string& what, const Location& loc) {
  std::string problem = shape_problem(s);
  if (!problem.empty()) throw Error(what + problem, loc, ErrorCode::Limit);
}

class Inference {
 public:
  // `b` is read by every body and outlives this walk: subgraphs share it, never copy it (a model with 10k
  // symbols and 20k bodies would copy 200M map entries).
  Inference(const Model& m, const DimBindings& b, ShapeResult& r, InferenceWork& work)
      : model_(m), bind_(b), result_(r), work_(work) {}

  // `binds` is the object `bind_` refers to: the main walk adds the defaults of unbound symbols to it.
  void run_main(DimBindings& binds) {
    const Graph& g = model_.graph;
    GraphShapes& gs = result_.graph;
    seed_common(g, gs, {});
    for (int v : g.inputs) {
      gs.values[std::size_t(v)] = bind_declared(g.values[std::size_t(v)], true);
      check_shape(gs.values[std::size_t(v)], "input '" + std::string(g.values[std::size_t(v)].name) + "'", {});
    }
    // Symbols of the main inputs that the caller left unbound keep their default everywhere (value_info,
    // bodies), so that one symbol never has two sizes.
    for (const auto& u : result_.symbols)
      if (!u.bound) binds.values.emplace(u.name, u.value);
    walk(g, gs, {});
  }

  // Subgraph: inputs supplied by the op's rule; outer-scope values come from the enclosing scopes.
  std::vector<ValueShape> run_sub(const Graph& g, GraphShapes& gs, const std::vector<ValueShape>& inputs,
                                  std::vector<const GraphShapes*> scopes) {
    seed_common(g, gs, scopes);
    for (std::size_t i = 0; i < g.inputs.size(); ++i) {
      const Value& v = g.values[std::size_t(g.inputs[i])];
      ValueShape s = i < inputs.size() ? inputs[i] : ValueShape{};
      if (s.rank < 0 && v.declared) s = bind_declared(v, false);
      check_shape(s, "subgraph input '" + std::string(v.name) + "'", Location{{}, {}, {}, g.path});
      gs.values[std::size_t(g.inputs[i])] = std::move(s);
    }
    walk(g, gs, scopes);
    std::vector<ValueShape> outs;
    for (int v : g.outputs) outs.push_back(gs.values[std::size_t(v)]);
    return outs;
  }

 private:
  const Model& model_;
  const DimBindings& bind_;  // the caller's bindings, plus the defaults used for unbound input symbols
  ShapeResult& result_;
  InferenceWork& work_;
  std::set<std::string> reported_symbols_;
  // Of result_.unknown_ops, by the interned domain and op type (one StringPool per model): a lookup per
  // unknown node without making its name.
  struct OpKeyHash {
    std::size_t operator()(const std::pair<const char*, const char*>& k) const {
      return std::hash<const char*>()(k.first) * 31 + std::hash<const char*>()(k.second);
    }
  };
  std::unordered_set<std::pair<const char*, const char*>, OpKeyHash> unknown_seen_;

  void seed_common(const Graph& g, GraphShapes& gs, const std::vector<const GraphShapes*>& scopes) {
    gs.values.assign(g.values.size(), ValueShape{});
    gs.status.assign(g.nodes.size(), NodeStatus::Unknown);
    gs.subgraphs.clear();
    for (std::size_t i = 0; i < g.initializers.size(); ++i) {
      const TensorMeta& t = g.initializers[i];
      ValueShape s = ValueShape::of(t.dtype, t.dims);
      if (t.data) s.value = SharedConst(*t.data);
      gs.values[std::size_t(g.initializer_values[i])] = std::move(s);
    }
    if (scopes.empty()) return;
    for (std::size_t v = 0; v < g.outer_of.size(); ++v)
      if (g.outer_of[v] >= 0) gs.values[v] = scopes.back()->values[std::size_t(g.outer_of[v])];
  }

  // A declared type with its symbols bound. Main-graph inputs report each symbol once.
  ValueShape bind_declared(const Value& v, bool is_main_input) {
    ValueShape s;
    if (!v.declared) return s;
    const TypeInfo& declared = *v.declared;
    s.dtype = declared.dtype;
    if (!declared.has_shape) {
      if (is_main_input && declared.is_tensor)
        result_.warnings.push_back({"input '" + std::string(v.name) + "' has no declared shape; its consumers stay unknown", {}});
      return s;
    }
    s.rank = int(declared.dims.size());
    for (std::size_t i = 0; i < declared.dims.size(); ++i) {
      const Dim& d = declared.dims[i];
      if (d.known()) {
        s.dims.push_back(d.value);
        continue;
      }
      auto it = d.symbol.empty() ? bind_.values.end() : bind_.values.find(d.symbol);
      if (!is_main_input) {
        // value_info and body inputs: a symbol of no graph input (an exporter's "unk__3") stays unknown
        // rather than taking a silent default
        s.dims.push_back(it != bind_.values.end() ? it->second : -1);
        continue;
      }
      std::int64_t value = it != bind_.values.end() ? it->second : bind_.unbound_default;
      s.dims.push_back(value);
      if (d.symbol.empty()) {
        result_.warnings.push_back({"input '" + std::string(v.name) + "' dim " + std::to_string(i) +
                                        " is dynamic and unnamed; using " + std::to_string(value),
                                    {}});
      } else if (reported_symbols_.insert(d.symbol).second) {
        bool bound = it != bind_.values.end();
        result_.symbols.push_back({d.symbol, value, bound});
        if (!bound)
          result_.warnings.push_back({"dim '" + d.symbol + "' is not bound; using " + std::to_string(value) +
                                          " (bind it with --dim " + d.symbol + "=N)",
                                      {}});
      }
    }
    return s;
  }

  void walk(const Graph& g, GraphShapes& gs, std::vector<const GraphShapes*> scopes) {
    scopes.push_back(&gs);  // (a copy per call) the rules of this graph see its values last
    work_.done += g.nodes.size();
    for (int ni : g.order) {
      const Node& n = g.nodes[std::size_t(ni)];
      const OpSpec* spec = find_op(n.domain, n.op_type);
      if (spec) {
        ShapeContext ctx(model_, g, n, gs.values, gs.subgraphs, bind_, result_.warnings,
                         result_.unknown_ops, scopes.data(), int(scopes.size()), work_);
        try {
          spec->shape(ctx);
        } catch (const Error& e) {
          // Node's own checks (an attribute of the wrong type) know the node but not its graph.
          if (!e.where().graph.empty() || g.path.empty()) throw;
          Location at = e.where();
          at.graph = g.path;
          throw Error(e.message(), at, e.code());
        }
        gs.status[std::size_t(ni)] = NodeStatus::Inferred;
        // Where a rule could not tell the rank or the type (its inputs come from an op without a rule),
        // a declared type (graph output, value_info) fills in, if it has no unknown dims.
        for (int o : n.outputs()) {
          if (o < 0) continue;
          ValueShape& out = gs.values[std::size_t(o)];
          const Value& val = g.values[std::size_t(o)];
          if (!val.declared) continue;
          if (out.dtype == DType::Undefined) out.dtype = val.declared->dtype;
          if (out.rank < 0 && val.declared->has_shape) {
            ValueShape d = bind_declared(val, false);
            if (d.fully_known()) out = std::move(d);
          }
        }
        // A data-dependent estimate taints what is computed from it: outputs with dims, and contents
        // (a Gather of an estimated Shape is as much an estimate as the dim it reads).
        bool estimated_input = false;
        for (int v : n.inputs()) estimated_input |= v >= 0 && gs.values[std::size_t(v)].estimated;
        if (estimated_input)
          for (int o : n.outputs())
            if (o >= 0 && (gs.values[std::size_t(o)].rank > 0 || gs.values[std::size_t(o)].value))
              gs.values[std::size_t(o)].estimated = true;
      } else {
        bool all = !n.outputs().empty();
        for (int o : n.outputs()) {
          if (o < 0) continue;
          const Value& val = g.values[std::size_t(o)];
          if (val.declared && val.declared->has_shape) {
            gs.values[std::size_t(o)] = bind_declared(val, false);
          } else {
            if (val.declared) gs.values[std::size_t(o)].dtype = val.declared->dtype;  // a type, no shape
            all = false;
          }
        }
        gs.status[std::size_t(ni)] = all ? NodeStatus::FromValueInfo : NodeStatus::Unknown;
        if (!all) {
          if (unknown_seen_.insert({n.domain.data(), n.op_type.data()}).second)
            result_.unknown_ops.push_back(n.qualified_op());
        }
      }
      for (int o : n.outputs()) {
        if (o < 0) continue;
        std::string problem = shape_problem(gs.values[std::size_t(o)]);
        if (!problem.empty())
          throw Error("output '" + std::string(g.values[std::size_t(o)].name) + "'" + problem,
                      Location{n.byte_offset, n.display_name(), n.op_type, g.path}, ErrorCode::Limit);
      }
    }
  }

  friend class perfcard::ShapeContext;
};

}  // namespace

ShapeContext::ShapeContext(const Model& model, const Graph& graph, const Node& node, std::vector<ValueShape>& values,
                           NodeBodies<GraphShapes>& subgraphs, const DimBindings& bindings,
                           std::vector<Diagnostic>& warnings, std::vector<std::string>& unknown_ops,
                           const GraphShapes* const* scopes, int scope_depth, InferenceWork& work)
    : model_(model), graph_(graph), node_(node), values_(values), subgraphs_(subgraphs), bindings_(bindings),
      warnings_(warnings), unknown_ops_(unknown_ops), scopes_(scopes), scope_depth_(scope_depth), work_(work),
      opset_(model.opset(node.domain)) {
  if (node.domain.empty() && opset_ == 0) opset_ = 1;
}

const ValueShape& ShapeContext::input(std::size_t i) const {
  if (!has_input(i)) fail("required input " + std::to_string(i) + " is missing");
  return values_[std::size_t(node_.inputs()[i])];
}

const ValueShape* ShapeContext::input_if(std::size_t i) const {
  return has_input(i) ? &values_[std::size_t(node_.inputs()[i])] : nullptr;
}

bool ShapeContext::input_ints(std::size_t i, std::vector<std::int64_t>& out) const {
  const ValueShape* s = input_if(i);
  if (!s || !s->value || s->value->is_float) return false;
  out = s->value->ints;
  return true;
}

void ShapeContext::set_output(std::size_t i, ValueShape s) {
  if (!has_output(i)) return;
  if (s.rank >= 0 && s.dims.size() != std::size_t(s.rank)) s.rank = int(s.dims.size());
  values_[std::size_t(node_.outputs()[i])] = std::move(s);
}

void ShapeContext::set_output_value(std::size_t i, DType t, Dims dims, ConstData v) {
  ValueShape s = ValueShape::of(t, std::move(dims));
  s.value = SharedConst(std::move(v));
  set_output(i, std::move(s));
}

std::vector<ValueShape> ShapeContext::run_subgraph(const Graph& body, const std::vector<ValueShape>& inputs) {
  // Results are stored at the body's position among the node's graph attributes, so that costing can
  // walk attributes in order without knowing which order the rule ran them in.
  std::size_t slot = 0, count = 0;
  for (const auto& a : node_.attributes)
    for (const auto& g : a.graphs) {
      if (&g == &body) slot = count;
      ++count;
    }
  std::vector<GraphShapes>& mine = subgraphs_.of(std::size_t(node_.index));
  if (mine.size() < count) mine.resize(count);
  ShapeResult scratch;  // warnings and unknown ops of bodies join the caller's lists below
  Inference inf(model_, bindings_, scratch, work_);
  std::vector<const GraphShapes*> scopes(scopes_, scopes_ + scope_depth_);
  auto outs = inf.run_sub(body, mine[slot], inputs, scopes);
  // Appended as they are: a body inferred twice (Loop) repeats its warnings, and infer_shapes drops the
  // repeats once at the end, in linear time (a check per merge was quadratic in the warnings).
  for (auto& w : scratch.warnings) warnings_.push_back(std::move(w));
  // Ops of a body without a rule are unknown ops of the model, listed with the top-level ones.
  for (auto& op : scratch.unknown_ops) {
    warnings_.push_back({"op " + op + " in subgraph " + body.path + " has no shape rule", {}});
    unknown_ops_.push_back(std::move(op));
  }
  return outs;
}

void ShapeContext::discard_subgraph(const Graph& body) {
  std::size_t count = 0;
  std::vector<GraphShapes>& mine = subgraphs_.of(std::size_t(node_.index));
  for (const auto& a : node_.attributes)
    for (const auto& g : a.graphs) {
      if (&g == &body && count < mine.size()) mine[count] = GraphShapes{};
      ++count;
    }
}

std::vector<std::string> ShapeContext::symbols_bound_to(std::int64_t value) const {
  std::vector<std::string> out;
  for (const auto& [name, v] : bindings_.values)
    if (v == value) out.push_back(name);
  return out;
}

void ShapeContext::fail(const std::string& message) const {
  throw Error(message, Location{node_.byte_offset, node_.display_name(), node_.op_type, graph_.path});
}

void ShapeContext::warn(const std::string& message) {
  warnings_.push_back({message, Location{node_.byte_offset, node_.display_name(), node_.op_type, graph_.path}});
}

std::int64_t ShapeContext::normalize_axis(std::int64_t axis, std::int64_t rank) const {
  if (axis < -rank || axis >= rank)
    fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

namespace {

std::size_t count_nodes(const Graph& g) {
  std::size_t n = g.nodes.size();
  for (const auto& node : g.nodes)
    for (const auto& a : node.attributes)
      for (const auto& body : a.graphs) n += count_nodes(body);
  return n;
}

}  // namespace

bool ShapeContext::may_rerun(const Graph& body) const { return work_.done + count_nodes(body) <= work_.budget; }

namespace {

// Repeats (a body inferred twice, at several levels) are dropped, keeping first occurrences in order.
// Keeps the first of each repeat, in order. The set holds views of the items (key(item)), which stay put
// until it is gone: no key is copied, which 100k unknown ops or 40k warnings feel.
template <class T, class Key>
void keep_first(std::vector<T>& items, Key key) {
  using View = decltype(key(items.front()));
  struct Hash {
    std::size_t operator()(const View& v) const {
      std::size_t h = 0;
      std::apply([&h](const auto&... part) { ((h = h * 31 + std::hash<std::string_view>()(part)), ...); }, v);
      return h;
    }
  };
  std::vector<bool> first(items.size());
  {
    std::unordered_set<View, Hash> seen;
    for (std::size_t i = 0; i < items.size(); ++i) first[i] = seen.insert(key(items[i])).second;
  }
  std::size_t kept = 0;
  for (std::size_t i = 0; i < items.size(); ++i)
    if (first[i]) {
      if (kept != i) items[kept] = std::move(items[i]);
      ++kept;
    }
  items.resize(kept);
}

void drop_repeats(ShapeResult& r) {
  keep_first(r.unknown_ops, [](const std::string& op) { return std::tuple<std::string_view>(op); });
  keep_first(r.warnings, [](const Diagnostic& w) {
    return std::tuple<std::string_view, std::string_view, std::string_view>(w.message, w.where.node, w.where.graph);
  });
}

}  // namespace

ShapeResult infer_shapes(const Model& model, const DimBindings& bindings) {
  for (const auto& [name, v] : bindings.values)
    if (v < 0 || v > (std::int64_t{1} << 40))
      throw option_error("dim " + name + "=" + std::to_string(v) + " is out of range (0 .. 2^40)");
  ShapeResult r;
  DimBindings binds = bindings;
  // Each node is inferred once, plus second passes over growing Loop bodies while they fit this budget.
  InferenceWork work;
  work.budget = 4 * count_nodes(model.graph) + 4096;
  Inference(model, binds, r, work).run_main(binds);
  drop_repeats(r);
  return r;
}

}  // namespace perfcard
