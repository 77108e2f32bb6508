#include "perfcard/learned_prepared.h"

#include "perfcard/error.h"
#include "perfcard/kernel_sequence.h"

namespace perfcard {

LearnedPrepared::LearnedPrepared(PredictorSubject s, KernelPlan p)
    : FeaturePrepared(std::move(s), std::move(p)), unknown_ops(unknown_op_count(*subject.model)) {}

std::unique_ptr<LearnedPrepared> prepare_learned(const PredictorSubject& subject, const RooflinePredictor& roofline,
                                                 std::span<const Embedder* const> embedders) {
  auto base = roofline.prepare(subject);
  auto p = std::make_unique<LearnedPrepared>(subject, std::move(as_roofline_prepared(*base).plan));
  // The learned models trained on inference runs: a training step is the roofline's alone (every learned
  // predictor declines it), so nothing is embedded for it.
  if (subject.mode == Mode::Training) return p;
  for (const Embedder* e : embedders)
    if (e) e->embed_into(*p);
  return p;
}

const LearnedPrepared& as_learned_prepared(const Prepared& p, std::string_view who) {
  const auto* l = dynamic_cast<const LearnedPrepared*>(&p);
  if (!l) throw internal_error("a " + std::string(who) + " prediction was asked with state prepared by another predictor");
  return *l;
}

}  // namespace perfcard
