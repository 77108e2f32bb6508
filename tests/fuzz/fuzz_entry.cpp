#include "fuzz_entry.h"

#include <span>

#include "perfcard/analysis.h"
#include "perfcard/error.h"
#include "perfcard/onnx_loader.h"

namespace perfcard::fuzz {

Outcome run_one(const std::uint8_t* data, std::size_t size, std::string* error) {
  try {
    Model m = load_model(std::span<const std::uint8_t>(data, size));
    AnalyzeOptions opts;
    // Small bindings for the usual symbol names, so symbolic models still get concrete shapes.
    opts.dims.values = {{"batch", 2}, {"batch_size", 2}, {"N", 2}, {"seq", 8}, {"sequence", 8}};
    opts.dims.unbound_default = 1;
    Analysis a = analyze(m, opts);
    (void)a;
    return Outcome::Analyzed;
  } catch (const Error& e) {
    if (error) *error = e.what();
    return Outcome::Rejected;
  }
}

}  // namespace perfcard::fuzz
