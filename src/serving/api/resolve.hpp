#pragma once
// The one lookup of the servable a request names, shared by the REST and gRPC APIs: a model
// name plus a version, a label or neither (the latest AVAILABLE version). It reports what it
// found; each API turns the outcome into its own status code and message (TF Serving answers
// an unknown label NOT_FOUND over REST and INVALID_ARGUMENT over gRPC, for instance).
// No allocation, no lock: it reads the snapshot the caller holds.
#include <cstdint>
#include <memory>
#include <string_view>

#include "serving/model_repository.hpp"

namespace tickinfer::serving {

enum class VersionChoice { Latest, Version, Label };

struct ServableRequest {
  VersionChoice choice = VersionChoice::Latest;
  int64_t version = 0;     // VersionChoice::Version
  std::string_view label;  // VersionChoice::Label
};

enum class ResolveOutcome {
  Found,          // `servable` is set
  UnknownModel,   // no model of that name
  UnknownLabel,   // the model has no such label
  NotAvailable,   // the version named (or, for Latest, any version) is not AVAILABLE
};

struct ResolvedServable {
  ResolveOutcome outcome = ResolveOutcome::UnknownModel;
  const ModelSnapshot* model = nullptr;  // set unless UnknownModel; lives as long as the snapshot
  int64_t version = -1;  // the version named, directly or through its label; -1 for Latest
  std::shared_ptr<const Servable> servable;  // set when Found
};

// `model`: the snapshot's entry for the name the request gives (RepositorySnapshot::find, which
// the caller has already done to pick the model's metrics); nullptr for an unknown model.
ResolvedServable resolve(const ModelSnapshot* model, const ServableRequest& request) noexcept;

}  // namespace tickinfer::serving
