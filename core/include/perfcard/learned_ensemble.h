// The ensemble: the roofline and the learned corrections of it (trees, GNN, transformer: the members its file
// names) combined, with a calibrated band and an out-of-distribution flag from the members' disagreement
// and the model's distance from the training set.
//
//   log latency = sum_i w[g][i] log latency_i          (members in the file's order, w fitted per group
//                                                       on out-of-fold validation rows: g = the device
//                                                       family where it had rows enough, else gpu / cpu)
//   band        = latency x exp(+-(base[g] + spread[g] s)), s = the learned members' standard deviation
//                 of log latency (population: |a - b| / 2 for two); base and spread fitted so that `band.coverage` of the validation rows
//                 fall inside
//
// scripts/training/ensemble.py fits it (never on held-out test rows) and writes weights/ensemble.pcwt; the
// file names the versions of the members it was fitted with, and the core refuses other members. Where a
// device family has no held-out rows, the learned members have no measured error to stand on: the row is
// the roofline's, flagged, and says so.
#pragma once

#include <cstddef>
#include <limits>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "perfcard/learned_model.h"
#include "perfcard/network_model.h"
#include "perfcard/training_domain.h"
#include "perfcard/weights_file.h"

namespace perfcard {

// The ensemble's state: its members' states, and how far the model lies from the training models.
class EnsembleState final : public LearnedState {
 public:
  std::vector<std::shared_ptr<const LearnedState>> members;  // in the members' order
  // The distance of the model's embedding from the training models' (the same for every device and MIG
  // slice, so measured once with the embeddings); NaN where nothing was embedded (a training step).
  double distance = std::numeric_limits<double>::quiet_NaN();
  std::size_t unknown_ops = 0;
};

class LearnedEnsemble final : public LearnedModel {
 public:
  // `core`: the roofline and input schemas the core builds with; `loaded`: the models already loaded, where
  // the file's members are found by name and version.
  LearnedEnsemble(const WeightsFile& file, const CoreSchemas& core,
                std::span<const std::shared_ptr<const LearnedModel>> loaded);
  std::string name() const override { return "ensemble"; }
  std::string version() const override { return version_; }
  bool reads_graph() const override { return reads_graph_; }
  bool reads_sequence() const override { return reads_sequence_; }
  const TrainingAccuracy& training_accuracy() const override { return domain_.training_accuracy(); }
  // An EnsembleState: every member's state (the embeddings the members read) and the model's distance.
  std::shared_ptr<const LearnedState> prepare(const ModelInputs& inputs) const override;
  std::vector<Verdict> decide(const LearnedState& state, std::span<const RowQuery> queries,
                              FeatureRows rows) const override;

  // Distance of a model's embedding from the training models' (nearest centroid, in units of the training
  // embeddings' spread), and the distance beyond which a model is out of distribution.
  double embedding_distance(std::span<const float> embedding) const;
  // The embedding of an EnsembleState that distance is measured on: the file's "ood.embedding", the GNN's
  // graph embedding or the transformer's kernel-sequence embedding.
  std::span<const float> ood_embedding(const LearnedState& state) const;
  double distance_threshold() const { return threshold_; }
  // The learned members, in the file's order.
  const std::vector<std::shared_ptr<const LearnedModel>>& members() const { return members_; }

 private:
  struct Group {
    std::vector<double> weights;  // per member, the roofline's first
    double band_base = 0, band_spread = 0;
  };
  std::vector<std::shared_ptr<const LearnedModel>> members_;  // the learned ones, in the file's order
  std::vector<const RooflineCorrection*> corrections_;        // the same, as corrections
  std::size_t placer_ = 0;                                    // the member whose embedding places a model
  bool reads_graph_ = false, reads_sequence_ = false;
  std::map<std::string, Group> groups_;  // by device family where it had rows enough, else "gpu" / "cpu"
  double coverage_ = 0;
  std::vector<float> centroids_, scale_;  // [k, dims], [dims]
  std::size_t dims_ = 0;
  double threshold_ = 0;
  TrainingDomain domain_;
  std::string version_;
};

}  // namespace perfcard
