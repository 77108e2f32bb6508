#include "perfcard/predictor_registry.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "perfcard/error.h"
#include "perfcard/sha256.h"
#include "perfcard/gnn_predictor.h"
#include "perfcard/trees_predictor.h"

namespace perfcard {
namespace {

constexpr std::string_view kNames[] = {"auto", "roofline", "trees", "gnn", "transformer", "ensemble"};
// The learned predictors make_learned_predictor() can build (the others are not trained yet).
constexpr std::string_view kRunnable[] = {"trees", "gnn"};

std::string joined(std::span<const std::string_view> names) {
  std::string s;
  for (auto n : names) (s += s.empty() ? "" : ", ") += n;
  return s;
}

// Per device family: the trees where their file says they beat the roofline on held-out rows, and only
// for rows inside their training data. Out of distribution (a device or model unlike any they were
// trained on) the trees extrapolate a correction nothing measured; the roofline's physics carries the
// device and the shapes there, so it predicts, and the row says why.
class AutoPredictor final : public Predictor {
 public:
  AutoPredictor(std::shared_ptr<const RooflinePredictor> roofline, std::shared_ptr<const TreesPredictor> trees)
      : roofline_(std::move(roofline)), trees_(std::move(trees)) {}
  std::string name() const override { return "auto"; }
  std::string version() const override { return roofline_->version() + (trees_ ? "+" + trees_->version() : ""); }
  std::unique_ptr<Prepared> prepare(const PredictorSubject& s) const override {
    return trees_ ? trees_->prepare(s) : roofline_->prepare(s);
  }
  PredictorOutput predict(const Prepared& p, const DeviceQuery& q) const override {
    if (trees_ && q.device) {
      std::string family;
      roofline_->constants().family_of(*q.device, &family);
      auto it = trees_->accuracy().find(family);
      if (it != trees_->accuracy().end() && it->second.beats_roofline) {
        PredictorOutput learned = trees_->predict(p, q);
        if (!learned.out_of_distribution) return learned;
        PredictorOutput out = roofline_->predict(p, q);
        out.warnings.push_back("the trees (" + trees_->version() +
                               ") would be out of distribution here, so the roofline predicts; they said " +
                               std::to_string(learned.latency_ms).substr(0, 8) + " ms");
        return out;
      }
    }
    return roofline_->predict(p, q);
  }

 private:
  std::shared_ptr<const RooflinePredictor> roofline_;
  std::shared_ptr<const TreesPredictor> trees_;
};

}  // namespace

std::span<const std::string_view> predictor_names() { return kNames; }
std::span<const std::string_view> learned_predictor_names() { return kRunnable; }

void verify_weights(std::string_view manifest_json, std::string_view path, std::span<const std::uint8_t> bytes) {
  const std::string where = "weights file '" + std::string(path) + "'";
  nlohmann::json m = nlohmann::json::parse(manifest_json, nullptr, /*allow_exceptions=*/false);
  if (!m.is_object() || !m.contains("files") || !m["files"].is_array())
    throw data_error("the weights manifest is not a JSON object with a 'files' array");
  for (const auto& f : m["files"]) {
    if (!f.is_object() || f.value("path", "") != path) continue;
    const auto size = f.value("size", std::int64_t{-1});
    if (size != std::int64_t(bytes.size()))
      throw data_error(where + " is " + std::to_string(bytes.size()) + " bytes; the manifest lists " + std::to_string(size) +
                       " (truncated, or not the file the manifest was made for)");
    const std::string want = f.value("sha256", "");
    const std::string got = sha256_hex(bytes);
    if (want != got)
      throw data_error(where + " has sha256 " + got + "; the manifest lists " + want + " (the file was changed)");
    return;
  }
  throw data_error(where + " is not listed in the weights manifest");
}

std::shared_ptr<const Predictor> make_learned_predictor(const WeightsFile& file,
                                                        std::shared_ptr<const RooflinePredictor> roofline) {
  const std::string_view kind = file.predictor();
  if (kind == "trees") return std::make_shared<TreesPredictor>(file, std::move(roofline));
  if (kind == "gnn") return std::make_shared<GnnPredictor>(file, std::move(roofline));
  throw data_error("the weights file holds a '" + std::string(kind) + "' predictor, which this build cannot run (it runs: " +
                   joined(kRunnable) + ")");
}

std::shared_ptr<const Predictor> load_learned_predictor(std::string_view manifest_json, std::string_view path,
                                                        std::span<const std::uint8_t> bytes,
                                                        std::shared_ptr<const RooflinePredictor> roofline) {
  verify_weights(manifest_json, path, bytes);
  return make_learned_predictor(read_weights(bytes), std::move(roofline));
}

std::shared_ptr<const Predictor> select_predictor(std::string_view name, const PredictorSet& set) {
  if (!set.roofline) throw internal_error("no roofline predictor to select from");
  std::shared_ptr<const TreesPredictor> trees;
  for (const auto& p : set.learned)
    if (auto t = std::dynamic_pointer_cast<const TreesPredictor>(p)) trees = t;
  if (name == "auto") return std::make_shared<AutoPredictor>(set.roofline, trees);
  if (name == "roofline") return set.roofline;
  for (const auto& p : set.learned)
    if (p->name() == name) return p;
  for (auto n : kNames)
    if (n == name)
      throw option_error("predictor '" + std::string(name) + "' is not available: its weights are not loaded" +
                         (std::find(std::begin(kRunnable), std::end(kRunnable), name) != std::end(kRunnable)
                              ? ""
                              : " (not trained yet)"));
  throw option_error("unknown predictor '" + std::string(name) + "' (known: " + joined(kNames) + ")");
}

}  // namespace perfcard
