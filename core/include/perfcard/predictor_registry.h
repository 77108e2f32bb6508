// Predictors by name. The roofline is built from its constants; a learned predictor from its weights file,
// chosen by the file's `predictor` key (as ggml's registry builds a backend by name), after the file's
// bytes are checked against weights/manifest.json. "auto" picks, per device family, a learned predictor
// that beats the roofline on that family's held-out rows with the lowest error there (as its file records
// them), else the roofline.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "perfcard/learned_model.h"
#include "perfcard/roofline_predictor.h"

namespace perfcard {

// Every name --predictor accepts, in the order the docs list them.
std::span<const std::string_view> predictor_names();
// The learned predictors this build can run (make_learned_predictor); each ships as weights/<name>.pcwt.
std::span<const std::string_view> learned_predictor_names();

// Throws Error(bad_data) naming `path` when the manifest has no entry for it, or its size or sha256
// differ (a tampered or stale file).
void verify_weights(std::string_view manifest_json, std::string_view path, std::span<const std::uint8_t> bytes);

// The predictor a weights file holds, by its `predictor` key; Error(bad_data) for a name this build cannot
// run. `learned` builds its model (natively, or in the page's second module); `loaded`: the predictors
// loaded so far, where a combining predictor (the ensemble) finds its members. The bytes need the
// alignment a heap buffer has; the model copies what it keeps.
std::shared_ptr<const Predictor> make_learned_predictor(std::span<const std::uint8_t> bytes,
                                                        std::shared_ptr<const RooflinePredictor> roofline,
                                                        const LearnedBackend& learned,
                                                        std::span<const std::shared_ptr<const Predictor>> loaded = {});

// verify_weights(), then make_learned_predictor(): what the CLI does for each shipped file and the page for
// each fetched one.
std::shared_ptr<const Predictor> load_learned_predictor(std::string_view manifest_json, std::string_view path,
                                                        std::span<const std::uint8_t> bytes,
                                                        std::shared_ptr<const RooflinePredictor> roofline,
                                                        const LearnedBackend& learned,
                                                        std::span<const std::shared_ptr<const Predictor>> loaded = {});

struct PredictorSet {
  std::shared_ptr<const RooflinePredictor> roofline;
  std::vector<std::shared_ptr<const Predictor>> learned;  // those whose files loaded
};

// "roofline", a learned name, or "auto"; Error(bad_option) for an unknown name, or a known one whose
// weights this build or page has not loaded (the message says which).
std::shared_ptr<const Predictor> select_predictor(std::string_view name, const PredictorSet& set);

}  // namespace perfcard
