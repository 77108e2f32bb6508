// How the GNN and transformer predictors turn their network's margin into a row: shared by both, and kept
// with the predictors (the networks themselves are networks.h).
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "perfcard/learned_prepared.h"
#include "perfcard/nn.h"
#include "perfcard/roofline_predictor.h"
#include "perfcard/training_domain.h"

namespace perfcard {

// A learned network's prediction for one device: the roofline timed once, its feature row, the network's
// margin on that row (`margin`), corrected and judged by the training domain, named, and flagged when the
// model has op types the network never saw (`whose`: "the GNN's"; `network`: "the GNN").
PredictorOutput network_prediction(const RooflinePredictor& roofline, const TrainingDomain& domain,
                                   const LearnedPrepared& p, const DeviceQuery& q,
                                   const std::function<double(std::span<const float>)>& margin,
                                   const std::string& name, const std::string& version, std::string_view network);

// A state's embedding `e`, or Error(internal) when the network (`network`: "GNN") never filled it.
const nn::Tensor2& embedded(const nn::Tensor2& e, std::string_view network);

}  // namespace perfcard
