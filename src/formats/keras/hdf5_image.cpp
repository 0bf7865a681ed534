#include "formats/keras/hdf5_image.hpp"

#include <hdf5.h>

#include <cstring>
#include <type_traits>

#include "formats/keras/hdf5_global_heap_check.hpp"
#include "formats/keras/keras_config.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::formats {

static_assert(std::is_same_v<hid_t, int64_t>, "Hdf5Image stores hid_t as int64_t");

namespace {

constexpr size_t kMaxAttributeElements = 1 << 20;
constexpr size_t kMaxAttributeBytes = size_t{64} << 20;
constexpr int kMaxDatasetRank = 8;
// A compressed (chunked) dataset may legitimately be larger than its storage, but not absurdly.
constexpr int64_t kMaxCompressionRatio = 1024;

std::mutex& hdf5_mutex() {
  static std::mutex m;
  return m;
}

// Owns one hid_t and closes it with the matching H5*close.
class Handle {
 public:
  Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  ~Handle() {
    if (id_ >= 0) close_(id_);
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (end > start) parts.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

std::string describe_type(hid_t type) {
  H5T_class_t cls = H5Tget_class(type);
  size_t bits = H5Tget_size(type) * 8;
  switch (cls) {
    case H5T_FLOAT: return "float" + std::to_string(bits);
    case H5T_INTEGER: return "int" + std::to_string(bits);
    case H5T_STRING: return "string";
    case H5T_COMPOUND: return "compound";
    default: return "HDF5 type class " + std::to_string(static_cast<int>(cls));
  }
}

// Number of elements of a dataspace that is scalar or simple; -1 if it is neither or too large.
int64_t element_count(hid_t space, std::vector<hsize_t>& dims) {
  H5S_class_t cls = H5Sget_simple_extent_type(space);
  if (cls == H5S_NULL) return 0;
  if (cls == H5S_SCALAR) return 1;
  if (cls != H5S_SIMPLE) return -1;
  int rank = H5Sget_simple_extent_ndims(space);
  if (rank < 0 || rank > kMaxDatasetRank) return -1;
  dims.assign(static_cast<size_t>(rank), 0);
  if (rank > 0 && H5Sget_simple_extent_dims(space, dims.data(), nullptr) < 0) return -1;
  int64_t n = 1;
  for (hsize_t d : dims) {
    if (d > (hsize_t{1} << 32)) return -1;
    n *= static_cast<int64_t>(d);
    if (n > (int64_t{1} << 40)) return -1;
  }
  return n;
}

}  // namespace

Hdf5Image::Hdf5Image(const void* data, size_t size, std::string label)
    : lock_(hdf5_mutex()), label_(std::move(label)), image_size_(size) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  if (data == nullptr || size < 8) throw Error(label_ + ": not a readable HDF5 file (too small)");
  check_global_heaps(static_cast<const unsigned char*>(data), size, label_);
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  if (!fapl.ok() || H5Pset_fapl_core(fapl.get(), 1 << 16, /*backing_store=*/0) < 0 ||
      H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG) < 0 ||
      H5Pset_file_image(fapl.get(), const_cast<void*>(data), size) < 0) {
    throw Error(label_ + ": cannot set up the in-memory HDF5 driver");
  }
  // The core driver refuses a name that exists on disk, and never touches the disk for an image.
  // A path below a device node cannot exist, so any file lying around cannot interfere.
  file_ = H5Fopen("/dev/null/tickinfer-memory-image.h5", H5F_ACC_RDONLY, fapl.get());
  if (file_ < 0) throw Error(label_ + ": not a readable HDF5 file");
}

Hdf5Image::~Hdf5Image() {
  if (file_ >= 0) H5Fclose(file_);
}

bool Hdf5Image::has_object(const std::string& path) const {
  std::string prefix;
  std::vector<std::string> parts = split_path(path);
  if (parts.empty()) return true;
  for (const std::string& part : parts) {
    prefix += prefix.empty() ? part : "/" + part;
    if (part == "." || part == "..") return false;
    if (H5Lexists(file_, prefix.c_str(), H5P_DEFAULT) <= 0) return false;
    H5L_info_t info;
    if (H5Lget_info(file_, prefix.c_str(), &info, H5P_DEFAULT) < 0) return false;
    if (info.type != H5L_TYPE_HARD) return false;
  }
  return true;
}

std::optional<std::vector<std::string>> Hdf5Image::string_attribute(const std::string& path,
                                                                    const std::string& name) const {
  const std::string obj_path = path.empty() ? "." : path;
  const std::string where = label_ + ": attribute '" + name + "' of '/" + path + "'";
  if (!path.empty() && !has_object(path)) return std::nullopt;
  htri_t exists = H5Aexists_by_name(file_, obj_path.c_str(), name.c_str(), H5P_DEFAULT);
  if (exists < 0) throw Error(where + ": cannot be read");
  if (exists == 0) return std::nullopt;
  Handle attr(H5Aopen_by_name(file_, obj_path.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT),
              H5Aclose);
  if (!attr.ok()) throw Error(where + ": cannot be opened");
  Handle type(H5Aget_type(attr.get()), H5Tclose);
  Handle space(H5Aget_space(attr.get()), H5Sclose);
  if (!type.ok() || !space.ok()) throw Error(where + ": cannot be read");
  std::vector<hsize_t> dims;
  int64_t n = element_count(space.get(), dims);
  if (n < 0 || dims.size() > 1 || static_cast<size_t>(n) > kMaxAttributeElements) {
    throw Error(where + ": unexpected shape");
  }
  std::vector<std::string> out;
  if (n == 0) return out;  // h5py writes an empty list as an empty float64 array
  if (H5Tget_class(type.get()) != H5T_STRING) {
    throw Error(where + ": expected strings, found " + describe_type(type.get()));
  }
  const size_t count = static_cast<size_t>(n);
  htri_t variable = H5Tis_variable_str(type.get());
  if (variable < 0) throw Error(where + ": cannot be read");
  if (variable > 0) {
    Handle mem(H5Tcopy(H5T_C_S1), H5Tclose);
    if (!mem.ok() || H5Tset_size(mem.get(), H5T_VARIABLE) < 0 ||
        H5Tset_cset(mem.get(), H5Tget_cset(type.get())) < 0) {
      throw Error(where + ": cannot be read");
    }
    std::vector<char*> ptrs(count, nullptr);
    if (H5Aread(attr.get(), mem.get(), ptrs.data()) < 0) throw Error(where + ": cannot be read");
    size_t total = 0;
    for (char* p : ptrs) {
      std::string s = p ? std::string(p, strnlen(p, kMaxAttributeBytes)) : std::string();
      total += s.size();
      out.push_back(std::move(s));
      if (total > kMaxAttributeBytes) break;
    }
    H5Dvlen_reclaim(mem.get(), space.get(), H5P_DEFAULT, ptrs.data());
    if (total > kMaxAttributeBytes) throw Error(where + ": too large");
  } else {
    size_t width = H5Tget_size(type.get());
    if (width == 0 || width > kMaxAttributeBytes / count) throw Error(where + ": too large");
    std::vector<char> buf(width * count);
    if (H5Aread(attr.get(), type.get(), buf.data()) < 0) throw Error(where + ": cannot be read");
    for (size_t i = 0; i < count; ++i) {
      const char* p = buf.data() + i * width;
      out.emplace_back(p, strnlen(p, width));  // fixed strings are NUL-padded, not terminated
    }
  }
  return out;
}

Weight Hdf5Image::read_float_dataset(const std::string& path, const std::string& ctx) {
  const std::string where = ctx + ": weight '" + path + "'";
  if (!has_object(path)) throw Error(where + " is missing from " + label_);
  H5O_info_t oinfo;
  if (H5Oget_info_by_name(file_, path.c_str(), &oinfo, H5P_DEFAULT) < 0 || oinfo.type != H5O_TYPE_DATASET) {
    throw Error(where + " is not a dataset");
  }
  Handle ds(H5Dopen2(file_, path.c_str(), H5P_DEFAULT), H5Dclose);
  if (!ds.ok()) throw Error(where + ": cannot be opened");
  Handle type(H5Dget_type(ds.get()), H5Tclose);
  Handle space(H5Dget_space(ds.get()), H5Sclose);
  Handle dcpl(H5Dget_create_plist(ds.get()), H5Pclose);
  if (!type.ok() || !space.ok() || !dcpl.ok()) throw Error(where + ": cannot be read");
  if (H5Tget_class(type.get()) != H5T_FLOAT || H5Tget_size(type.get()) != 4) {
    throw Error(where + " has dtype " + describe_type(type.get()) + "; only float32 is supported");
  }
  std::vector<hsize_t> dims;
  int64_t n = element_count(space.get(), dims);
  if (n < 0) throw Error(where + ": unsupported dataspace (rank above " + std::to_string(kMaxDatasetRank) + "?)");
  Weight w;
  for (hsize_t d : dims) {
    if (d == 0 || d > static_cast<hsize_t>(1 << 28)) {
      throw Error(where + ": dimension " + std::to_string(d) + " is out of range");
    }
    w.shape.push_back(static_cast<int>(d));
  }
  if (n == 0) throw Error(where + " is empty");
  if (values_read_ + n > kMaxTotalWeightValues) throw Error(where + ": model weights exceed 1 GiB");
  // Weights must live inside the image: no external raw files, no virtual datasets, and storage
  // that can hold the declared shape (a hostile header may declare a huge shape).
  H5D_layout_t layout = H5Pget_layout(dcpl.get());
  int external = H5Pget_external_count(dcpl.get());
  if (external != 0 || (layout != H5D_CONTIGUOUS && layout != H5D_COMPACT && layout != H5D_CHUNKED)) {
    throw Error(where + ": unsupported storage layout");
  }
  const int64_t bytes = n * 4;
  const int64_t storage = static_cast<int64_t>(H5Dget_storage_size(ds.get()));
  const int64_t image = static_cast<int64_t>(image_size_);
  if (layout == H5D_CHUNKED ? (storage <= 0 || bytes > storage * kMaxCompressionRatio || storage > image)
                            : (storage < bytes || storage > image)) {
    throw Error(where + ": stored data (" + std::to_string(storage) + " bytes) does not match its shape " +
                shape_str(w.shape));
  }
  w.data.resize(static_cast<size_t>(n));
  if (H5Dread(ds.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, w.data.data()) < 0) {
    throw Error(where + ": cannot be read (corrupt file?)");
  }
  values_read_ += n;
  return w;
}

}  // namespace tickinfer::formats
