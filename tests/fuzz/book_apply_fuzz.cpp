// libFuzzer: the input is a sequence of small operations, each turned into an itch::Message (or a
// sync call) and applied both to a small BookSet and to the simple model of tests/book_model.hpp;
// after every step the touched books must match level by level, queue by queue, counter by
// counter. Refs, prices and locates come from small ranges so duplicates, unknown refs, shared
// levels, crossings, overfills, mismatched locates and exhausted capacities are all common.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstdio>

#include "book/book_set.hpp"
#include "../book_model.hpp"

namespace {

using namespace tickinfer;
using namespace tickinfer::book::testing;

constexpr book::Capacity kCapacity{24, 10, 4};
constexpr std::size_t kOpBytes = 6;

struct Reader {
  const std::uint8_t* p;
  std::uint8_t operator[](std::size_t i) const { return p[i]; }
};

void check(const book::BookSet& set, const Model& model, std::uint16_t loc) {
  const std::string diff = compare(set, model, loc);
  if (!diff.empty()) {
    std::fprintf(stderr, "book differs from the model at locate %u: %s\n", unsigned{loc}, diff.c_str());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  book::BookSet set(kCapacity);
  Model model(kCapacity);
  itch::Message previous = msg(itch::Type::SystemEvent, 0);
  for (std::size_t at = 0; at + kOpBytes <= size; at += kOpBytes) {
    const Reader b{data + at};
    const std::uint16_t loc = b[1] % (kCapacity.instruments + 1);  // one past the end: overflow
    // Now and then past the index's direct pages, so its hash holds orders too.
    const std::uint64_t ref = b[2] < 224 ? b[2] % 40 : (std::uint64_t{1} << 30) + b[2] % 8;
    const std::uint32_t shares = b[3] % 9 * 10;                     // 0 now and then
    const std::uint32_t price = 1000 + b[4] % 12;
    const char side = b[5] < 8 ? static_cast<char>(b[5]) : (b[5] & 1 ? 'B' : 'S');
    itch::Message m;
    switch (b[0] % 12) {
      case 0: m = add(loc, ref, side, shares, price); break;
      case 1: m = add(loc, ref, side, shares, price, true); break;
      case 2: m = exec(loc, ref, shares); break;
      case 3: m = exec_price(loc, ref, shares, price + b[5] % 3, b[5] & 1 ? 'Y' : 'N'); break;
      case 4: m = cancel(loc, ref, shares); break;
      case 5: m = del(loc, ref); break;
      case 6: m = replace(loc, ref, b[5] % 40, shares, price); break;
      case 7: m = directory(loc, "SYM"); break;
      case 8: m = msg(static_cast<itch::Type>(b[5]), loc); break;  // any type byte at all
      case 9:
        set.mark_unsynced(loc);
        model.mark_unsynced(loc);
        continue;
      case 10:
        set.clear(loc);
        model.clear(loc);
        check(set, model, loc);
        continue;
      default:
        set.mark_synced(loc);
        model.mark_synced(loc);
        continue;
    }
    // The look-ahead's stages, as hints on whatever state this is: they must read nothing out of
    // bounds (the sanitizers) and change nothing (the check below). The previous message's Order
    // stage runs after its own apply changed the state it reads, as in a replay.
    set.prefetch(m, book::BookSet::LoadStage::Index);
    set.prefetch(m, book::BookSet::LoadStage::Order);
    const book::Applied a = set.apply(m);
    set.prefetch(previous, book::BookSet::LoadStage::Order);
    previous = m;
    model.apply(m);
    check(set, model, loc);
    if (a.locate != loc) check(set, model, a.locate);
    if (set.live_orders() != model.live_orders()) std::abort();
  }
  return 0;
}
