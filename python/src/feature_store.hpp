#pragma once
// tickinfer.FeatureStore (feature_store.cpp): the shared-memory feature store's reader in Python.
#include <nanobind/nanobind.h>

namespace tickinfer::python {

void bind_feature_store(nanobind::module_& m);

}  // namespace tickinfer::python
