// libFuzzer target for the ONNX loader and the analysis behind it (see docs/robustness.md).
// Only perfcard::Error may leave the core; any other exception escapes here and libFuzzer reports it.
#include <cstddef>
#include <cstdint>

#include "fuzz_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  perfcard::fuzz::run_one(data, size);
  return 0;
}
