// tickinfer.FeatureStore: a running pipeline's shared-memory feature store read from Python (a
// research notebook, a strategy prototype). It is the C++ reader (tickinfer/feature_store.hpp):
// the same seqlock, so a vector read here is never torn, and the same per-entry TTL.
// tickinfer.FeatureRing: the feature ring ([features] ring), every vector in order, at this
// reader's own position (features/shm_feature_ring.hpp).
#include "feature_store.hpp"

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <cstring>
#include <memory>

#include "array_args.hpp"
#include "tickinfer/error.hpp"
#include "tickinfer/feature_store.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace tickinfer::python {
namespace {

using features::ShmFeatureReader;
using features::ShmRead;
using features::ShmRowMeta;

// CLOCK_REALTIME, the clock the writer stamps with (system_clock on Linux).
std::int64_t realtime_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct PyFeatureStore {
  std::string name;
  std::unique_ptr<ShmFeatureReader> reader;
};

std::string store_name(std::string name) {
  if (name.rfind("shm:", 0) == 0) name = name.substr(4);
  if (name.empty()) throw Error("FeatureStore: empty store name");
  return name[0] == '/' ? name : "/" + name;
}

// One entry as a dict: status ("ok", "stale", "empty", "busy"), values (float64 array, or None
// when empty/busy) and the entry's meta.
nb::dict entry(const PyFeatureStore& s, std::size_t slot, std::int64_t now_ns) {
  const ShmFeatureReader& r = *s.reader;
  double* data = nullptr;
  const int64_t dims[1] = {static_cast<int64_t>(r.width())};
  nb::object values = new_double_array(dims, 1, &data);
  ShmRowMeta m;
  ShmRead st;
  {
    nb::gil_scoped_release unlocked;
    st = r.read(slot, data, &m, now_ns);
  }
  nb::dict d;
  d["status"] = features::to_string(st);
  d["instrument"] = r.instrument_at(slot);
  const bool have = st == ShmRead::Ok || st == ShmRead::Stale;
  d["values"] = have ? values : nb::none();
  d["updates"] = m.updates;
  d["tick_seq"] = m.tick_seq;
  d["exchange_ts_ns"] = m.ts_ns;
  d["bar"] = m.bar;
  d["published_ns"] = m.published_ns;
  d["all_warm"] = (m.flags & features::kShmAllWarm) != 0;
  d["window_ready"] = (m.flags & features::kShmWindowReady) != 0;
  return d;
}

std::int64_t now_or(std::int64_t now_ns) { return now_ns < 0 ? realtime_ns() : now_ns; }

struct PyFeatureRing {
  std::string name;
  std::unique_ptr<features::FeatureRingReader> reader;
};

}  // namespace

void bind_feature_ring(nb::module_& m) {
  nb::class_<PyFeatureRing>(m, "FeatureRing",
                            "A running pipeline's feature ring ([features] ring = NAME): every vector, in order.\n"
                            "Each FeatureRing reads at its own position; the writer never waits for it.")
      .def(
          "__init__",
          [](PyFeatureRing* self, const std::string& name, bool from_start) {
            const std::string n = store_name(name.rfind("ring:", 0) == 0 ? name.substr(5) : name);
            new (self) PyFeatureRing{n, std::make_unique<features::FeatureRingReader>(n, from_start)};
          },
          "name"_a, "from_start"_a = false,
          "Attaches to ring NAME; from_start: begin at the oldest record still held (else at the next).")
      .def_prop_ro("names", [](const PyFeatureRing& r) { return r.reader->names(); })
      .def_prop_ro("width", [](const PyFeatureRing& r) { return r.reader->width(); })
      .def_prop_ro("capacity", [](const PyFeatureRing& r) { return r.reader->capacity(); })
      .def_prop_ro("missed", [](const PyFeatureRing& r) { return r.reader->missed(); },
                   "Records lost to the writer lapping this reader.")
      .def_prop_ro("lag", [](const PyFeatureRing& r) { return r.reader->lag(); }, "Records written, not yet read.")
      .def(
          "poll",
          [](PyFeatureRing& r, std::size_t max_records) {
            // Up to max_records records: (instrument, tick_seq, exchange_ts_ns, published_ns) columns and
            // a [n, width] float64 array of their values.
            const std::size_t w = r.reader->width();
            std::vector<double> values;
            std::vector<std::uint64_t> inst, seq;
            std::vector<std::int64_t> ts, pub;
            std::vector<double> row(w);
            features::RingRecord rec;
            {
              nb::gil_scoped_release unlocked;
              while (inst.size() < max_records && r.reader->poll(rec, row.data())) {
                inst.push_back(rec.instrument);
                seq.push_back(rec.tick_seq);
                ts.push_back(rec.ts_ns);
                pub.push_back(rec.published_ns);
                values.insert(values.end(), row.begin(), row.end());
              }
            }
            double* data = nullptr;
            const int64_t dims[2] = {static_cast<int64_t>(inst.size()), static_cast<int64_t>(w)};
            nb::object arr = new_double_array(dims, 2, &data);
            if (!values.empty()) std::memcpy(data, values.data(), values.size() * sizeof(double));
            nb::dict d;
            d["instrument"] = inst;
            d["tick_seq"] = seq;
            d["exchange_ts_ns"] = ts;
            d["published_ns"] = pub;
            d["values"] = arr;
            return d;
          },
          "max_records"_a = 65536,
          "The records published since the last poll (at most max_records), as a dict of lists\n"
          "(instrument, tick_seq, exchange_ts_ns, published_ns) and values, a [n, width] float64 array.");
}

void bind_feature_store(nb::module_& m) {
  nb::class_<PyFeatureStore>(m, "FeatureStore",
                             "A running pipeline's shared-memory feature store ([features] shm = NAME), read-only.\n"
                             "FeatureStore('NAME') attaches; read(instrument) returns that instrument's latest vector.")
      .def(
          "__init__",
          [](PyFeatureStore* self, const std::string& name) {
            const std::string n = store_name(name);
            new (self) PyFeatureStore{n, std::make_unique<ShmFeatureReader>(n)};
          },
          "name"_a, "Attaches to store NAME (as in the run's config; 'shm:NAME' works too). Raises tickinfer.Error.")
      .def_prop_ro("names", [](const PyFeatureStore& s) { return s.reader->names(); }, "Column names, in vector order.")
      .def_prop_ro("set_name", [](const PyFeatureStore& s) { return s.reader->set_name(); })
      .def_prop_ro("width", [](const PyFeatureStore& s) { return s.reader->width(); })
      .def_prop_ro("instruments",
                   [](const PyFeatureStore& s) {
                     std::vector<std::uint32_t> ids;
                     for (std::size_t i = 0; i < s.reader->slots(); ++i) ids.push_back(s.reader->instrument_at(i));
                     return ids;
                   },
                   "Instrument ids, in slot order.")
      .def_prop_ro("ttl_ns", [](const PyFeatureStore& s) { return s.reader->ttl_ns(); },
                   "Entries published longer ago than this read as 'stale' (0: never).")
      .def_prop_ro("feature_set_id", [](const PyFeatureStore& s) { return s.reader->feature_set_id(); })
      .def_prop_ro("writer_pid", [](const PyFeatureStore& s) { return s.reader->writer_pid(); })
      .def_prop_ro("heartbeat_ns", [](const PyFeatureStore& s) { return s.reader->heartbeat_ns(); },
                   "The writer's last heartbeat, CLOCK_REALTIME ns (compare with time.time_ns()).")
      .def(
          "writer_state",
          [](const PyFeatureStore& s, double stale_after_s, std::int64_t now_ns) {
            return features::to_string(
                s.reader->writer_state(now_or(now_ns), static_cast<std::int64_t>(stale_after_s * 1e9)));
          },
          "stale_after_s"_a = 2.0, "now_ns"_a = -1,
          "'alive', 'stale' (no heartbeat for stale_after_s) or 'restarted' (a new writer attached).")
      .def(
          "read",
          [](const PyFeatureStore& s, std::uint32_t instrument, std::int64_t now_ns) {
            const int slot = s.reader->slot_of(instrument);
            if (slot < 0)
              throw Error("FeatureStore '" + s.name + "': instrument " + std::to_string(instrument) + " is not in it");
            return entry(s, static_cast<std::size_t>(slot), now_or(now_ns));
          },
          "instrument"_a, "now_ns"_a = -1,
          "The instrument's latest entry: a dict with status ('ok', 'stale', 'empty', 'busy'), values\n"
          "(float64 array, None when empty), updates, tick_seq, exchange_ts_ns, bar, published_ns,\n"
          "all_warm, window_ready. now_ns: the time the TTL is judged at (-1: now; 0: no TTL check).")
      .def(
          "snapshot",
          [](const PyFeatureStore& s, std::int64_t now_ns) {
            const std::int64_t now = now_or(now_ns);
            nb::list out;
            for (std::size_t i = 0; i < s.reader->slots(); ++i) out.append(entry(s, i, now));
            return out;
          },
          "now_ns"_a = -1, "Every instrument's entry, in slot order (see read).")
      .def("__repr__", [](const PyFeatureStore& s) {
        return "<tickinfer.FeatureStore '" + s.name + "' set '" + s.reader->set_name() + "' " +
               std::to_string(s.reader->slots()) + " instruments x " + std::to_string(s.reader->width()) + " features>";
      });
}

}  // namespace tickinfer::python
