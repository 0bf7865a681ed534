#pragma once
// A pre-check of an HDF5 file image for one corruption that makes libhdf5 (1.10) loop forever:
// a global heap collection ("GCOL", where variable-length strings such as Keras' model_config
// live) whose free-space object records a size of zero, so the library's object walk never
// advances. libhdf5 cannot be interrupted, so such files are refused before it sees them.
#include <cstddef>
#include <string>

namespace tickinfer::formats {

// Throws tickinfer::Error naming `label` if a global heap collection in the image cannot be
// walked to its end with progress at every object. Images without global heaps pass.
void check_global_heaps(const unsigned char* image, size_t size, const std::string& label);

}  // namespace tickinfer::formats
