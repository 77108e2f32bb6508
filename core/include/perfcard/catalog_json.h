// The catalog document: devices (with their MIG tables), carbon regions, runtimes and the predictor with
// its measured accuracy per device family. `perfcard devices --json` prints it and the JS API's
// devices() returns it: one writer for both.
#pragma once

#include <string>
#include <string_view>

#include "perfcard/carbon.h"
#include "perfcard/device.h"
#include "perfcard/roofline_predictor.h"
#include "perfcard/roofline.h"

namespace perfcard {

// The text, as `perfcard devices --json` prints it (indent 2) and the page reads it (indent -1).
std::string catalog_to_json(const DeviceCatalog& catalog, const CarbonTable& carbon, const RooflineConstants& constants,
                            const Predictor& predictor, std::string_view version, int indent = -1);

}  // namespace perfcard
