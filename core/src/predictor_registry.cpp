#include "perfcard/predictor_registry.h"

#include <algorithm>

#include "perfcard/error.h"
#include "perfcard/json.h"
#include "perfcard/learned_predictor.h"
#include "perfcard/sha256.h"

namespace perfcard {
namespace {

constexpr std::string_view kNames[] = {"auto", "roofline", "trees", "gnn", "transformer", "ensemble"};
// The learned predictors the learned library can build, in the order they load: the ensemble after its
// members.
constexpr std::string_view kRunnable[] = {"trees", "gnn", "transformer", "ensemble"};

std::string joined(std::span<const std::string_view> names) {
  std::string s;
  for (auto n : names) (s += s.empty() ? "" : ", ") += n;
  return s;
}

// Per device: of the loaded learned predictors, the one with the lowest measured error among those whose
// file says they beat the roofline where this device stands (its family's held-out model families on a
// device they trained on; leave one device out on a device they never saw, which is most of the catalog and
// every visitor's own machine), else the roofline. A row the chosen predictor flags out of distribution
// keeps its prediction, flagged, with its doubled uncertainty and the reasons: on the held-out rows, for
// every reason of the flag (the embedding's distance, a feature outside the training range), the learned
// rows were nearer the measurements than the roofline's (docs/accuracy.md, the band table's "roofline MAPE
// flagged"). Only where it declines (a runtime it has no measured rows of) does the roofline predict, and
// the row says why.
class AutoPredictor final : public Predictor {
 public:
  AutoPredictor(std::shared_ptr<const RooflinePredictor> roofline, std::vector<std::shared_ptr<const Predictor>> learned)
      : roofline_(std::move(roofline)), learned_(std::move(learned)) {
    // One prepared state must serve every choice: the state of each model some device may get, over one
    // roofline plan and feature builder. A loaded predictor that beats the roofline nowhere is never asked,
    // so it prepares nothing.
    for (const auto& p : learned_) {
      const auto* l = dynamic_cast<const LearnedPredictor*>(p.get());
      if (l && p->beats_roofline_somewhere()) models_.push_back(l->model().get());
    }
  }
  std::string name() const override { return "auto"; }
  std::string version() const override {
    std::string v = roofline_->version();
    for (const auto& p : learned_) v.append("+").append(p->version());
    return v;
  }
  std::unique_ptr<Prepared> prepare(const PredictorSubject& s) const override {
    if (learned_.empty()) return roofline_->prepare(s);
    return prepare_learned(s, *roofline_, models_);
  }
  PredictorOutput predict(const Prepared& p, const DeviceQuery& q) const override {
    return std::move(predict_many(p, std::span<const DeviceQuery>(&q, 1)).front());
  }
  // Each chosen predictor answers its devices at once.
  std::vector<PredictorOutput> predict_many(const Prepared& p, std::span<const DeviceQuery> queries) const override {
    // No learned predictor trained on training steps: the roofline times them (predict says so once).
    const bool learned = p.subject.mode != Mode::Training;
    std::vector<const Predictor*> chosen(queries.size(), nullptr);
    for (std::size_t i = 0; i < queries.size() && learned; ++i) {
      if (!queries[i].device) continue;
      std::string family;
      roofline_->constants().family_of(*queries[i].device, &family);
      chosen[i] = choose(family, queries[i].device->id);
    }
    std::vector<PredictorOutput> out = predict_grouped(
        std::span<const Predictor* const>(chosen), queries, [&](const Predictor* who, std::span<const DeviceQuery> qs) {
          return who ? who->predict_many(p, qs) : roofline_->predict_many(p, qs);
        });
    for (std::size_t i = 0; i < queries.size(); ++i) {
      // Its own row, flagged or not; or the roofline's that it gave unflagged (a host time the caller stated).
      if (!chosen[i] || !out[i].declined()) continue;
      // It declined a runtime it never trained on: the roofline's own row, which nothing flags.
      out[i] = roofline_->predict(p, queries[i]);
      out[i].warnings.push_back("the " + chosen[i]->name() + " predictor (" + chosen[i]->version() +
                                ") never trained on runtime '" + p.subject.runtime + "', so the roofline predicts");
    }
    return out;
  }

 private:
  std::shared_ptr<const RooflinePredictor> roofline_;
  std::vector<std::shared_ptr<const Predictor>> learned_;
  const Predictor* choose(const std::string& family, const std::string& device_id) const {
    const Predictor* best = nullptr;
    double best_mape = 0;
    for (const auto& p : learned_) {
      const FamilyAccuracy* acc = p->accuracy_for(family, device_id);
      if (!acc || !acc->beats_roofline) continue;
      if (!best || acc->mape < best_mape) best = p.get(), best_mape = acc->mape;
    }
    return best;
  }

  std::vector<const LearnedModel*> models_;
};

}  // namespace

std::span<const std::string_view> predictor_names() { return kNames; }
std::span<const std::string_view> learned_predictor_names() { return kRunnable; }

void verify_weights(std::string_view manifest_json, std::string_view path, std::span<const std::uint8_t> bytes) {
  const std::string where = "weights file '" + std::string(path) + "'";
  const Json m = Json::parse(manifest_json, "the weights manifest");
  if (!m.is_object() || !m["files"].is_array())
    throw data_error("the weights manifest is not a JSON object with a 'files' array");
  for (const Json& f : m["files"].items()) {
    if (!f.is_object() || f.string_or("path", "") != path) continue;
    const auto size = std::int64_t(f.number_or("size", -1));
    if (size != std::int64_t(bytes.size()))
      throw data_error(where + " is " + std::to_string(bytes.size()) + " bytes; the manifest lists " + std::to_string(size) +
                       " (truncated, or not the file the manifest was made for)");
    const std::string want = f.string_or("sha256", "");
    const std::string got = sha256_hex(bytes);
    if (want != got)
      throw data_error(where + " has sha256 " + got + "; the manifest lists " + want + " (the file was changed)");
    return;
  }
  throw data_error(where + " is not listed in the weights manifest");
}

std::shared_ptr<const Predictor> make_learned_predictor(std::span<const std::uint8_t> bytes,
                                                        std::shared_ptr<const RooflinePredictor> roofline,
                                                        const LearnedBackend& learned,
                                                        std::span<const std::shared_ptr<const Predictor>> loaded) {
  if (!roofline) throw internal_error("a learned predictor needs the roofline it corrects");
  std::vector<std::shared_ptr<const LearnedModel>> models;
  for (const auto& p : loaded)
    if (const auto* l = dynamic_cast<const LearnedPredictor*>(p.get())) models.push_back(l->model());
  return std::make_shared<LearnedPredictor>(learned.load(bytes, core_schemas(*roofline), models), roofline);
}

std::shared_ptr<const Predictor> load_learned_predictor(std::string_view manifest_json, std::string_view path,
                                                        std::span<const std::uint8_t> bytes,
                                                        std::shared_ptr<const RooflinePredictor> roofline,
                                                        const LearnedBackend& learned,
                                                        std::span<const std::shared_ptr<const Predictor>> loaded) {
  verify_weights(manifest_json, path, bytes);
  return make_learned_predictor(bytes, std::move(roofline), learned, loaded);
}

std::shared_ptr<const Predictor> select_predictor(std::string_view name, const PredictorSet& set) {
  if (!set.roofline) throw internal_error("no roofline predictor to select from");
  if (name == "auto") return std::make_shared<AutoPredictor>(set.roofline, set.learned);
  if (name == "roofline") return set.roofline;
  for (const auto& p : set.learned)
    if (p->name() == name) return p;
  for (auto n : kNames)
    if (n == name)
      throw option_error("predictor '" + std::string(name) + "' is not available: its weights are not loaded");
  throw option_error("unknown predictor '" + std::string(name) + "' (known: " + joined(kNames) + ")");
}

}  // namespace perfcard
