// `perfcard card`: a static SVG card of a prediction, for README files and model cards where no script runs.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace perfcard::tools {

struct CardText {
  std::string title;     // the model's name
  std::string subtitle;  // mode, precision, dims
  std::string version;   // perfcard version
};

// An SVG document (UTF-8) with one row per prediction of a `perfcard predict --json` document.
std::string render_card_svg(const nlohmann::json& predict_doc, const CardText& text);

}  // namespace perfcard::tools
