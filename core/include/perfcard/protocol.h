// What a prediction is for besides the device: the protocol the model runs under (a no-grad forward, a
// forward with autograd on, or a training step) and training's optimizer. Memory and time both depend on
// them, so they live apart from either model.
#pragma once

#include <cstdint>
#include <string_view>

namespace perfcard {

enum class Mode : std::uint8_t { Inference, InferenceGrad, Training };
Mode parse_mode(std::string_view s);
std::string_view mode_name(Mode m);

// Training's optimizer: its state per weight element (Adam/AdamW: two fp32 moments; SGD with momentum: one;
// `none`: plain SGD, no state) and the passes its update makes over the weights (AdamW's decoupled weight
// decay, one more pass, is not counted).
enum class Optimizer : std::uint8_t { Adam, Sgd, None };
Optimizer parse_optimizer(std::string_view s);
std::string_view optimizer_name(Optimizer o);

}  // namespace perfcard
