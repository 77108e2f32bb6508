#include "perfcard/protocol.h"

#include <string>

#include "perfcard/error.h"

namespace perfcard {

Mode parse_mode(std::string_view s) {
  if (s == "inference") return Mode::Inference;
  if (s == "inference-grad") return Mode::InferenceGrad;
  if (s == "training") return Mode::Training;
  throw option_error("unknown memory protocol '" + std::string(s) + "' (use inference, inference-grad or training)");
}

std::string_view mode_name(Mode m) {
  switch (m) {
    case Mode::Inference: return "inference";
    case Mode::InferenceGrad: return "inference-grad";
    case Mode::Training: return "training";
  }
  return "inference";
}

Optimizer parse_optimizer(std::string_view s) {
  if (s == "adam" || s == "adamw") return Optimizer::Adam;
  if (s == "sgd") return Optimizer::Sgd;
  if (s == "none") return Optimizer::None;
  throw option_error("unknown optimizer '" + std::string(s) + "' (use adam, adamw, sgd (with momentum) or none)");
}

std::string_view optimizer_name(Optimizer o) {
  switch (o) {
    case Optimizer::Adam: return "adam";
    case Optimizer::Sgd: return "sgd";
    case Optimizer::None: return "none";
  }
  return "adam";
}

}  // namespace perfcard
