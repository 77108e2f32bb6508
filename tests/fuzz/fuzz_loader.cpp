// libFuzzer targets (see docs/robustness.md), one binary each, chosen at compile time by PERFCARD_FUZZ_ENTRY:
// run_one (the ONNX loader and the analysis behind it), run_weights (the PCWT reader), run_options (the
// options text of the JS API). Only perfcard::Error may leave the core; any other exception escapes here and
// libFuzzer reports it.
#include <cstddef>
#include <cstdint>

#include "fuzz_entry.h"

#ifndef PERFCARD_FUZZ_ENTRY
#define PERFCARD_FUZZ_ENTRY run_one
#endif

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  perfcard::fuzz::PERFCARD_FUZZ_ENTRY(data, size);
  return 0;
}
