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

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "perfcard/learned_prepared.h"
#include "perfcard/roofline_predictor.h"
#include "perfcard/training_domain.h"
#include "perfcard/weights_file.h"

namespace perfcard {

class EnsemblePredictor final : public Predictor, public Embedder {
 public:
  // `loaded`: the predictors already loaded; the file's members are found there by name and version.
  EnsemblePredictor(const WeightsFile& file, std::shared_ptr<const RooflinePredictor> roofline,
                    std::span<const std::shared_ptr<const Predictor>> loaded);
  std::string name() const override { return "ensemble"; }
  std::string version() const override { return version_; }
  // One state with every member's embedding (and the feature builder the trees read).
  std::unique_ptr<Prepared> prepare(const PredictorSubject& subject) const override;
  void embed_into(LearnedPrepared& p) const override;
  PredictorOutput predict(const Prepared& prepared, const DeviceQuery& query) const override;

  const TrainingDomain* training_domain() const override { return &domain_; }
  // Distance of a model's embedding from the training models' (nearest centroid, in units of the training
  // embeddings' spread), and the distance beyond which a model is out of distribution.
  double embedding_distance(std::span<const float> embedding) const;
  // The embedding of a prepared state that distance is measured on: the file's "ood.embedding", the GNN's
  // graph embedding or the transformer's kernel-sequence embedding.
  std::span<const float> ood_embedding(const LearnedPrepared& p) const;
  double distance_threshold() const { return threshold_; }

 private:
  struct Group {
    std::vector<double> weights;  // per member, the roofline's first
    double band_base = 0, band_spread = 0;
  };
  std::shared_ptr<const RooflinePredictor> roofline_;
  std::vector<std::shared_ptr<const Predictor>> members_;   // the learned ones, in the file's order
  std::vector<const RooflineCorrection*> corrections_;      // the same, as corrections
  std::vector<const Embedder*> embedders_;                  // those that embed the model
  bool sequence_ood_ = false;                               // the transformer's embedding places a model
  std::map<std::string, Group> groups_;  // by device family where it had rows enough, else "gpu" / "cpu"
  double coverage_ = 0;
  std::vector<float> centroids_, scale_;  // [k, dims], [dims]
  std::size_t dims_ = 0;
  double threshold_ = 0;
  TrainingDomain domain_;
  std::string version_;
};

}  // namespace perfcard
