#include "remote_networks.h"

#include <emscripten/em_js.h>
#include <emscripten/emscripten.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "perfcard/error.h"

// The JS side of each call is LearnedRuntime in wasm/perfcard.js: it copies the views it is given into
// the learned module's memory, calls it, and keeps the failure of a call that returned 0 / -1 / NaN for
// pc_learned_error(); it never throws. Pointers arrive as signed 32-bit numbers: its view() and the >>> 0
// here make them offsets again.

EM_JS(int, pc_learned_load, (const std::uint8_t* bytes, std::size_t size, const char* kind, int features), {
  const r = Module.perfcardLearned;
  if (!r) {
    Module.perfcardLearnedMissing = true;
    return 0;
  }
  Module.perfcardLearnedMissing = false;
  return r.load(r.view(HEAPU8, bytes, size), UTF8ToString(kind), features);
});

EM_JS(void, pc_learned_used, (int handle, std::uint8_t* out, std::size_t n), {
  const r = Module.perfcardLearned;
  r.used(handle, r.view(HEAPU8, out, n));
});

EM_JS(int, pc_learned_storage_length, (int handle), {
  return lengthBytesUTF8(Module.perfcardLearned.storage(handle));
});

EM_JS(void, pc_learned_storage, (int handle, char* out, int cap), {
  stringToUTF8(Module.perfcardLearned.storage(handle), out >>> 0, cap);
});

EM_JS(double, pc_learned_margin, (int handle, const float* row, std::size_t n), {
  const r = Module.perfcardLearned;
  return r.margin(handle, r.view(HEAPF32, row, n));
});

// Every array goes with its own length: the network checks that they agree with each other.
EM_JS(int, pc_learned_embed_graph, (int handle, std::size_t nodes, std::size_t features, const std::int32_t* op,
                                    std::size_t op_n, const std::int32_t* cls, std::size_t cls_n, const float* x,
                                    std::size_t x_n, const std::int32_t* src, std::size_t src_n,
                                    const std::int32_t* dst, std::size_t dst_n), {
  const r = Module.perfcardLearned;
  return r.embedGraph(handle, nodes >>> 0, features >>> 0, r.view(HEAP32, op, op_n), r.view(HEAP32, cls, cls_n),
                      r.view(HEAPF32, x, x_n), r.view(HEAP32, src, src_n), r.view(HEAP32, dst, dst_n));
});

EM_JS(int, pc_learned_embed_sequence, (int handle, std::size_t kernels, std::size_t features, const std::int32_t* op,
                                       std::size_t op_n, const std::int32_t* cls, std::size_t cls_n, const float* x,
                                       std::size_t x_n, std::size_t unknown_ops), {
  const r = Module.perfcardLearned;
  return r.embedSequence(handle, kernels >>> 0, features >>> 0, r.view(HEAP32, op, op_n), r.view(HEAP32, cls, cls_n),
                         r.view(HEAPF32, x, x_n), unknown_ops >>> 0);
});

EM_JS(void, pc_learned_take_embedding, (float* out, std::size_t n), {
  const r = Module.perfcardLearned;
  r.takeEmbedding(r.view(HEAPF32, out, n));
});

EM_JS(double, pc_learned_head, (int handle, const float* embedding, std::size_t width, const float* row, std::size_t n), {
  const r = Module.perfcardLearned;
  return r.head(handle, r.view(HEAPF32, embedding, width), r.view(HEAPF32, row, n));
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

int load(const WeightsFile& file, const char* kind, std::size_t features) {
  const int handle = pc_learned_load(file.bytes.data(), file.bytes.size(), kind, int(features));
  if (handle <= 0) rethrow();
  return handle;
}

// Owns one network of the learned module.
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

class RemoteTrees final : public TreeNetwork {
 public:
  RemoteTrees(int handle, std::size_t features) : h_(handle) {
    std::vector<std::uint8_t> used(features, 0);
    pc_learned_used(h_.get(), used.data(), used.size());
    used_.assign(used.begin(), used.end());
  }
  double margin(std::span<const float> row) const override {
    const double m = pc_learned_margin(h_.get(), row.data(), row.size());
    if (std::isnan(m)) rethrow();
    return m;
  }
  std::vector<bool> used_features() const override { return used_; }

 private:
  Handle h_;
  std::vector<bool> used_;
};

template <class Input>
class RemoteEmbedding final : public EmbeddingNetwork<Input> {
 public:
  explicit RemoteEmbedding(int handle)
      : h_(handle), storage_(text(pc_learned_storage_length(handle), [&](char* out, int cap) { pc_learned_storage(handle, out, cap); })) {}
  nn::Tensor2 embed(const Input& in) const override {
    int width = -1;
    if constexpr (std::is_same_v<Input, OperatorGraph>)
      width = pc_learned_embed_graph(h_.get(), in.nodes, in.features, in.op.data(), in.op.size(), in.op_class.data(),
                                     in.op_class.size(), in.x.data(), in.x.size(), in.edge_src.data(),
                                     in.edge_src.size(), in.edge_dst.data(), in.edge_dst.size());
    else
      width = pc_learned_embed_sequence(h_.get(), in.kernels, in.features, in.op.data(), in.op.size(),
                                        in.op_class.data(), in.op_class.size(), in.x.data(), in.x.size(),
                                        in.unknown_ops);
    if (width < 0) rethrow();
    nn::Tensor2 e(1, std::size_t(width));
    pc_learned_take_embedding(e.data(), e.size());
    return e;
  }
  double head(const nn::Tensor2& embedding, std::span<const float> row) const override {
    const double m = pc_learned_head(h_.get(), embedding.data(), embedding.size(), row.data(), row.size());
    if (std::isnan(m)) rethrow();
    return m;
  }
  std::string storage() const override { return storage_; }

 private:
  Handle h_;
  std::string storage_;
};

}  // namespace

std::shared_ptr<const TreeNetwork> RemoteNetworks::trees(const WeightsFile& file, std::size_t features) const {
  return std::make_shared<RemoteTrees>(load(file, "trees", features), features);
}

std::shared_ptr<const GraphNetwork> RemoteNetworks::graph(const WeightsFile& file) const {
  return std::make_shared<RemoteEmbedding<OperatorGraph>>(load(file, "graph", 0));
}

std::shared_ptr<const SequenceNetwork> RemoteNetworks::sequence(const WeightsFile& file) const {
  return std::make_shared<RemoteEmbedding<KernelSequence>>(load(file, "sequence", 0));
}

}  // namespace perfcard::wasm
