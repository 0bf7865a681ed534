#include "serving/api/resolve.hpp"

namespace tickinfer::serving {

ResolvedServable resolve(const ModelSnapshot* model, const ServableRequest& request) noexcept {
  ResolvedServable r;
  r.model = model;
  if (!r.model) return r;
  switch (request.choice) {
    case VersionChoice::Version:
      r.version = request.version;
      break;
    case VersionChoice::Label: {
      const auto it = r.model->labels.find(request.label);
      if (it == r.model->labels.end()) {
        r.outcome = ResolveOutcome::UnknownLabel;
        return r;
      }
      r.version = it->second;
      break;
    }
    case VersionChoice::Latest:
      break;
  }
  if (request.choice != VersionChoice::Latest) {
    r.servable = r.model->find_version(r.version);
  } else if (!r.model->available.empty()) {
    r.servable = r.model->available.back();
  }
  r.outcome = r.servable ? ResolveOutcome::Found : ResolveOutcome::NotAvailable;
  return r;
}

}  // namespace tickinfer::serving
