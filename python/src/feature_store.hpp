#pragma once
// tickinfer.FeatureStore and tickinfer.FeatureRing (feature_store.cpp): the shared-memory feature
// store's and ring's readers in Python.
#include <nanobind/nanobind.h>

namespace tickinfer::python {

void bind_feature_store(nanobind::module_& m);
void bind_feature_ring(nanobind::module_& m);

}  // namespace tickinfer::python
