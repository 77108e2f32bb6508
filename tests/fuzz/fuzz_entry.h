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

// A predictor weights file (PCWT): read_weights, then every tensor's view and the required metadata.
Outcome run_weights(const std::uint8_t* data, std::size_t size, std::string* error = nullptr);

// The options text the JS API takes (perfcard/options.h), for analyze and for predict.
Outcome run_options(const std::uint8_t* data, std::size_t size, std::string* error = nullptr);

// By target name ("onnx", "pcwt", "options"); nullptr for another name.
using Entry = Outcome (*)(const std::uint8_t*, std::size_t, std::string*);
Entry entry_named(const std::string& name);

}  // namespace perfcard::fuzz
