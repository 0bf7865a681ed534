#pragma once
// tickinfer.ItchReader and tickinfer.itch_features (itch_reader.cpp): ITCH 5.0 sources into numpy
// tables and book features.
#include <nanobind/nanobind.h>

namespace tickinfer::python {

void bind_itch(nanobind::module_& m);

}  // namespace tickinfer::python
