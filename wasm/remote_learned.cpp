#include "remote_learned.h"

#include <emscripten/em_js.h>
#include <emscripten/emscripten.h>

#include <cstdint>
#include <string>
#include <vector>

#include "perfcard/error.h"

#include "learned_wire.h"

// The JS side of each call is LearnedRuntime in wasm/perfcard.js: it copies the views it is given into
// the learned module's memory, calls it, keeps a text answer for pc_learned_text(), and keeps the failure
// of a call that returned 0 / -1 for pc_learned_error(); it never throws. Pointers arrive as signed 32-bit
// numbers: its view() and the >>> 0 here make them offsets again.

EM_JS(int, pc_learned_load, (const std::uint8_t* bytes, std::size_t size, const char* schemas,
                             const std::int32_t* loaded, std::size_t loaded_n), {
  const r = Module.perfcardLearned;
  if (!r) {
    Module.perfcardLearnedMissing = true;
    return 0;
  }
  Module.perfcardLearnedMissing = false;
  return r.load(r.view(HEAPU8, bytes, size), UTF8ToString(schemas), r.view(HEAP32, loaded, loaded_n));
});

// Every array goes with its own length: the network checks that they agree with each other.
EM_JS(void, pc_learned_stage_graph, (std::size_t nodes, std::size_t features, const std::int32_t* op, std::size_t op_n,
                                     const std::int32_t* cls, std::size_t cls_n, const float* x, std::size_t x_n,
                                     const std::int32_t* src, std::size_t src_n, const std::int32_t* dst,
                                     std::size_t dst_n), {
  const r = Module.perfcardLearned;
  r.stageGraph(nodes >>> 0, features >>> 0, r.view(HEAP32, op, op_n), r.view(HEAP32, cls, cls_n),
               r.view(HEAPF32, x, x_n), r.view(HEAP32, src, src_n), r.view(HEAP32, dst, dst_n));
});

EM_JS(void, pc_learned_stage_sequence, (std::size_t kernels, std::size_t features, const std::int32_t* op,
                                        std::size_t op_n, const std::int32_t* cls, std::size_t cls_n, const float* x,
                                        std::size_t x_n, std::size_t unknown_ops), {
  const r = Module.perfcardLearned;
  r.stageSequence(kernels >>> 0, features >>> 0, r.view(HEAP32, op, op_n), r.view(HEAP32, cls, cls_n),
                  r.view(HEAPF32, x, x_n), unknown_ops >>> 0);
});

EM_JS(int, pc_learned_prepare, (int model, std::size_t unknown_ops), {
  return Module.perfcardLearned.prepare(model, unknown_ops >>> 0);
});

EM_JS(int, pc_learned_decide, (int model, int state, const char* queries, std::size_t queries_n, const float* rows,
                               std::size_t n), {
  const r = Module.perfcardLearned;
  return r.decide(model, state, r.view(HEAPU8, queries, queries_n), r.view(HEAPF32, rows, n));
});

// The last text answer, as UTF-8 bytes: its length, then a copy into the core's memory at `out`.
EM_JS(int, pc_learned_text_length, (), {
  return Module.perfcardLearned.text().length;
});

EM_JS(void, pc_learned_text, (char* out), {
  HEAPU8.set(Module.perfcardLearned.text(), out >>> 0);
});

EM_JS(void, pc_learned_release, (int handle), {
  const r = Module.perfcardLearned;
  if (r) r.release(handle);
});

// The last failure as "code\tdetail" (the learned module's message has no location to add).
EM_JS(int, pc_learned_error_length, (), {
  const r = Module.perfcardLearned;
  return lengthBytesUTF8(!r || Module.perfcardLearnedMissing ? "" : r.errorText());
});

EM_JS(void, pc_learned_error, (char* out, int cap), {
  const r = Module.perfcardLearned;
  stringToUTF8(!r || Module.perfcardLearnedMissing ? "" : r.errorText(), out >>> 0, cap);
});

namespace perfcard::wasm {
namespace {

template <class Read>
std::string text(int length, Read&& read) {
  std::string s(std::size_t(length) + 1, '\0');
  read(s.data(), length + 1);
  s.resize(std::size_t(length));
  return s;
}

std::string last_text() {
  std::string s(std::size_t(pc_learned_text_length()), '\0');
  pc_learned_text(s.data());
  return s;
}

// The learned module's failure, as the Error it was there.
[[noreturn]] void rethrow() {
  const std::string e = text(pc_learned_error_length(), pc_learned_error);
  if (e.empty())
    throw internal_error("the learned runtime (perfcard_learned.wasm) is not loaded: the JS API loads it before a "
                         "weights file");
  const std::size_t tab = e.find('\t');
  const std::string code = e.substr(0, tab), message = tab == std::string::npos ? e : e.substr(tab + 1);
  throw Error(message, {}, error_code_from_name(code).value_or(ErrorCode::Internal));
}

// Owns one model or state of the learned module.
class Handle {
 public:
  explicit Handle(int h) : h_(h) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { pc_learned_release(h_); }
  int get() const { return h_; }

 private:
  int h_;
};

class RemoteState final : public LearnedState {
 public:
  explicit RemoteState(int handle) : h(handle) {}
  Handle h;
};

class RemoteModel final : public LearnedModel {
 public:
  explicit RemoteModel(int handle) : h_(handle), d_(parse_description(last_text())) {}
  std::string name() const override { return d_.name; }
  std::string version() const override { return d_.version; }
  bool reads_graph() const override { return d_.reads_graph; }
  bool reads_sequence() const override { return d_.reads_sequence; }
  const TrainingAccuracy& training_accuracy() const override { return d_.accuracy; }
  int handle() const { return h_.get(); }

  std::shared_ptr<const LearnedState> prepare(const ModelInputs& in) const override {
    if (const OperatorGraph* g = in.graph)
      pc_learned_stage_graph(g->nodes, g->features, g->op.data(), g->op.size(), g->op_class.data(), g->op_class.size(),
                             g->x.data(), g->x.size(), g->edge_src.data(), g->edge_src.size(), g->edge_dst.data(),
                             g->edge_dst.size());
    if (const KernelSequence* s = in.sequence)
      pc_learned_stage_sequence(s->kernels, s->features, s->op.data(), s->op.size(), s->op_class.data(),
                                s->op_class.size(), s->x.data(), s->x.size(), s->unknown_ops);
    const int state = pc_learned_prepare(h_.get(), in.unknown_ops);
    if (state <= 0) rethrow();
    return std::make_shared<RemoteState>(state);
  }

  std::vector<Verdict> decide(const LearnedState& state, std::span<const RowQuery> queries,
                              FeatureRows rows) const override {
    const auto* s = dynamic_cast<const RemoteState*>(&state);
    if (!s) throw internal_error("the " + d_.name + " predictor was asked to predict on a state another model prepared");
    const std::string text = queries_text(queries);
    if (pc_learned_decide(h_.get(), s->h.get(), text.data(), text.size(), rows.values.data(), rows.values.size()) < 0)
      rethrow();
    return parse_verdicts(last_text(), queries.size());
  }

 private:
  Handle h_;
  ModelDescription d_;
};

}  // namespace

std::shared_ptr<const LearnedModel> RemoteLearned::load(std::span<const std::uint8_t> bytes,
                                                        const CoreSchemas& core,
                                                        std::span<const std::shared_ptr<const LearnedModel>> loaded) const {
  std::vector<std::int32_t> handles;
  for (const auto& m : loaded)
    if (const auto* r = dynamic_cast<const RemoteModel*>(m.get())) handles.push_back(r->handle());
  const int handle = pc_learned_load(bytes.data(), bytes.size(), schemas_text(core).c_str(), handles.data(), handles.size());
  if (handle <= 0) rethrow();
  return std::make_shared<RemoteModel>(handle);
}

}  // namespace perfcard::wasm
