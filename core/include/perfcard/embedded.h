// Data files compiled into the binaries (weights/devices.json, weights/carbon_regions.json,
// weights/roofline.json): the CLI and the wasm module need no file system to predict.
#pragma once

#include <string_view>

namespace perfcard {

// Contents of an embedded file by its name ("devices.json"); empty when not embedded.
std::string_view embedded_file(std::string_view name);

}  // namespace perfcard
