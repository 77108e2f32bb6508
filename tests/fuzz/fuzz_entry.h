// The one entry point that the libFuzzer target and the replay test share: load the bytes as an ONNX
// model and analyze it with a small dim binding. A perfcard::Error is the expected outcome for bad
// input; anything else (another exception, a crash, a sanitizer report) is a bug.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace perfcard::fuzz {

enum class Outcome { Analyzed, Rejected };

// Throws whatever the core throws other than perfcard::Error. `error`, when given, receives the
// what() string of a rejection.
Outcome run_one(const std::uint8_t* data, std::size_t size, std::string* error = nullptr);

}  // namespace perfcard::fuzz
