#pragma once
// Test support for the book tests and the book fuzzer: builders for the ITCH messages the book
// reads, and a deliberately simple model of the book rules (std::map of price -> deque of orders
// per side, std::unordered_map of ref -> order) that BookSet must match message by message:
// every level, every queue, every integrity counter.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "book/book_set.hpp"
#include "feed/byte_order.hpp"
#include "itch/itch_messages.hpp"

namespace tickinfer::book::testing {

inline itch::Message msg(itch::Type t, std::uint16_t locate) {
  itch::Message m;
  std::memset(static_cast<void*>(&m), 0, sizeof m);
  m.header.type = t;
  m.header.locate = locate;
  return m;
}
inline itch::Message add(std::uint16_t locate, std::uint64_t ref, char side, std::uint32_t shares,
                         std::uint32_t price, bool mpid = false) {
  itch::Message m = msg(mpid ? itch::Type::AddOrderMpid : itch::Type::AddOrder, locate);
  m.add.order_ref = ref;
  m.add.side = side;
  m.add.shares = shares;
  m.add.price = price;
  std::memcpy(m.add.stock, "TEST    ", 8);
  return m;
}
inline itch::Message exec(std::uint16_t locate, std::uint64_t ref, std::uint32_t shares) {
  itch::Message m = msg(itch::Type::OrderExecuted, locate);
  m.executed.order_ref = ref;
  m.executed.shares = shares;
  return m;
}
inline itch::Message exec_price(std::uint16_t locate, std::uint64_t ref, std::uint32_t shares,
                                std::uint32_t price, char printable = 'Y') {
  itch::Message m = msg(itch::Type::OrderExecutedWithPrice, locate);
  m.executed_with_price.order_ref = ref;
  m.executed_with_price.shares = shares;
  m.executed_with_price.price = price;
  m.executed_with_price.printable = printable;
  return m;
}
inline itch::Message cancel(std::uint16_t locate, std::uint64_t ref, std::uint32_t shares) {
  itch::Message m = msg(itch::Type::OrderCancel, locate);
  m.cancel.order_ref = ref;
  m.cancel.shares = shares;
  return m;
}
inline itch::Message del(std::uint16_t locate, std::uint64_t ref) {
  itch::Message m = msg(itch::Type::OrderDelete, locate);
  m.del.order_ref = ref;
  return m;
}
inline itch::Message replace(std::uint16_t locate, std::uint64_t original, std::uint64_t fresh,
                             std::uint32_t shares, std::uint32_t price) {
  itch::Message m = msg(itch::Type::OrderReplace, locate);
  m.replace.original_ref = original;
  m.replace.new_ref = fresh;
  m.replace.shares = shares;
  m.replace.price = price;
  return m;
}
inline itch::Message directory(std::uint16_t locate, const char* symbol) {
  itch::Message m = msg(itch::Type::StockDirectory, locate);
  std::memset(m.stock_directory.stock, ' ', 8);
  std::memcpy(m.stock_directory.stock, symbol, std::min<std::size_t>(8, std::strlen(symbol)));
  return m;
}

// A valid random day in miniature: prices near a moving mid per symbol, adds and deletes
// dominant, some orders far from the mid so a few sides grow hundreds of levels deep.
inline std::vector<itch::Message> make_stream(std::size_t n, std::uint16_t symbols, std::uint64_t seed) {
  struct Live {
    std::uint16_t locate;
    std::uint32_t shares;
  };
  std::mt19937_64 rng(seed);
  std::vector<std::uint32_t> mid(symbols + 1, 0);
  for (auto& m : mid) m = 100'000 + static_cast<std::uint32_t>(rng() % 100'000);
  std::vector<std::uint64_t> refs;  // live refs, any symbol
  std::unordered_map<std::uint64_t, Live> live;
  std::uint64_t next_ref = 1;
  std::vector<itch::Message> out;
  out.reserve(n);
  auto take = [&]() {  // a live ref, removed from the pick list
    const std::size_t i = rng() % refs.size();
    const std::uint64_t r = refs[i];
    refs[i] = refs.back();
    refs.pop_back();
    return r;
  };
  while (out.size() < n) {
    const std::uint32_t op = static_cast<std::uint32_t>(rng() % 100);
    if (refs.size() < 20'000 || op < 45) {
      const bool deep_book = rng() % 10 == 0;
      const std::uint16_t loc = static_cast<std::uint16_t>(1 + rng() % (deep_book ? 4 : symbols));
      if (rng() % 200 == 0) mid[loc] += static_cast<std::uint32_t>(rng() % 41) - 20;
      const bool bid = rng() % 2;
      std::uint32_t away = static_cast<std::uint32_t>(rng() % 8);
      if (deep_book && rng() % 2 == 0) away = static_cast<std::uint32_t>(rng() % 600);
      const std::uint32_t shares = 100 * (1 + static_cast<std::uint32_t>(rng() % 5));
      const std::uint64_t ref = next_ref++;
      out.push_back(add(loc, ref, bid ? 'B' : 'S', shares, bid ? mid[loc] - away : mid[loc] + 1 + away));
      refs.push_back(ref);
      live[ref] = Live{loc, shares};
      continue;
    }
    const std::uint64_t ref = take();
    Live& o = live[ref];
    if (op < 80) {
      out.push_back(del(o.locate, ref));
      live.erase(ref);
    } else if (op < 88) {
      const std::uint32_t x = 1 + static_cast<std::uint32_t>(rng() % o.shares);
      out.push_back(op < 84 ? exec(o.locate, ref, x) : exec_price(o.locate, ref, x, mid[o.locate]));
      if (x == o.shares) live.erase(ref);
      else o.shares -= x, refs.push_back(ref);
    } else if (op < 92) {
      const std::uint32_t x = 1 + static_cast<std::uint32_t>(rng() % o.shares);
      out.push_back(cancel(o.locate, ref, x));
      if (x == o.shares) live.erase(ref);
      else o.shares -= x, refs.push_back(ref);
    } else {
      const std::uint64_t fresh = next_ref++;
      const std::uint32_t shares = 100 * (1 + static_cast<std::uint32_t>(rng() % 5));
      const std::uint32_t price = mid[o.locate] + static_cast<std::uint32_t>(rng() % 11) - 5;
      out.push_back(replace(o.locate, ref, fresh, shares, price));
      live[fresh] = Live{o.locate, shares};
      live.erase(ref);
      refs.push_back(fresh);
    }
  }
  return out;
}

// The wire form of the message kinds make_stream draws (and R), at the spec's offsets.
inline std::vector<std::uint8_t> encode(const itch::Message& m) {
  using feed::store_be16;
  using feed::store_be32;
  using feed::store_be64;
  const auto type = static_cast<std::uint8_t>(m.header.type);
  std::vector<std::uint8_t> b(itch::message_length(type), 0);
  b[0] = type;
  store_be16(&b[1], m.header.locate);
  store_be16(&b[5], static_cast<std::uint16_t>(m.header.timestamp_ns >> 32));
  store_be32(&b[7], static_cast<std::uint32_t>(m.header.timestamp_ns));
  switch (m.header.type) {
    case itch::Type::StockDirectory: std::copy(m.stock_directory.stock, m.stock_directory.stock + 8, &b[11]); break;
    case itch::Type::AddOrder:
    case itch::Type::AddOrderMpid:
      store_be64(&b[11], m.add.order_ref);
      b[19] = static_cast<std::uint8_t>(m.add.side);
      store_be32(&b[20], m.add.shares);
      std::copy(m.add.stock, m.add.stock + 8, &b[24]);
      store_be32(&b[32], m.add.price);
      break;
    case itch::Type::OrderExecuted:
      store_be64(&b[11], m.executed.order_ref);
      store_be32(&b[19], m.executed.shares);
      break;
    case itch::Type::OrderExecutedWithPrice:
      store_be64(&b[11], m.executed_with_price.order_ref);
      store_be32(&b[19], m.executed_with_price.shares);
      b[31] = static_cast<std::uint8_t>(m.executed_with_price.printable);
      store_be32(&b[32], m.executed_with_price.price);
      break;
    case itch::Type::OrderCancel:
      store_be64(&b[11], m.cancel.order_ref);
      store_be32(&b[19], m.cancel.shares);
      break;
    case itch::Type::OrderDelete: store_be64(&b[11], m.del.order_ref); break;
    case itch::Type::OrderReplace:
      store_be64(&b[11], m.replace.original_ref);
      store_be64(&b[19], m.replace.new_ref);
      store_be32(&b[27], m.replace.shares);
      store_be32(&b[31], m.replace.price);
      break;
    default: break;
  }
  return b;
}

// A day on the wire: R for locates 1..symbols (named S1, S2, ...), then the stream, each message
// encoded.
inline std::vector<std::vector<std::uint8_t>> wire_day(const std::vector<itch::Message>& stream,
                                                       std::uint16_t symbols) {
  std::vector<std::vector<std::uint8_t>> wire;
  for (std::uint16_t l = 1; l <= symbols; ++l) {
    char name[9];
    std::snprintf(name, sizeof name, "S%u", unsigned{l});
    wire.push_back(encode(directory(l, name)));
  }
  for (const auto& m : stream) wire.push_back(encode(m));
  return wire;
}

// The rules of docs/book.md, written for clarity, not speed.
class Model {
 public:
  explicit Model(const Capacity& c) : cap_(c) {}

  void apply(const itch::Message& m) {
    const std::uint16_t loc = m.header.locate;
    switch (m.header.type) {
      case itch::Type::AddOrder:
      case itch::Type::AddOrderMpid: return on_add(loc, m.add);
      case itch::Type::OrderExecuted: return on_reduce(loc, m.executed.order_ref, m.executed.shares);
      case itch::Type::OrderExecutedWithPrice:
        return on_reduce(loc, m.executed_with_price.order_ref, m.executed_with_price.shares);
      case itch::Type::OrderCancel: return on_reduce(loc, m.cancel.order_ref, m.cancel.shares);
      case itch::Type::OrderDelete: return on_delete(loc, m.del.order_ref);
      case itch::Type::OrderReplace: return on_replace(loc, m.replace);
      case itch::Type::StockDirectory:
        if (loc >= cap_.instruments) ++overflow_.capacity_rejects;  // no room to name it
        return;
      default: return;
    }
  }
  void mark_unsynced(std::uint16_t loc) {
    if (loc < cap_.instruments) books_[loc].synced = false;
  }
  void mark_synced(std::uint16_t loc) {
    if (loc < cap_.instruments) books_[loc].synced = true;
  }
  void clear(std::uint16_t loc) {
    if (loc >= cap_.instruments) return;
    for (auto& side : books_[loc].side) {
      for (auto& [price, queue] : side) {
        for (std::uint64_t ref : queue) orders_.erase(ref);
        --levels_;
      }
      side.clear();
    }
  }

  // Levels best first: (price, shares, orders), and the queue of (ref, shares) of each level.
  std::vector<Level> levels(std::uint16_t loc, int side) const {
    std::vector<Level> out;
    auto it = books_.find(loc);
    if (it == books_.end()) return out;
    auto one = [&](const auto& kv) {
      Level l{kv.first, 0, static_cast<std::uint32_t>(kv.second.size())};
      for (std::uint64_t ref : kv.second) l.shares += orders_.at(ref).shares;
      out.push_back(l);
    };
    const auto& s = it->second.side[side];
    if (side == 0) for (auto r = s.rbegin(); r != s.rend(); ++r) one(*r);
    else for (const auto& kv : s) one(kv);
    return out;
  }
  std::vector<std::pair<std::uint64_t, std::uint32_t>> queue(std::uint16_t loc, int side,
                                                             std::uint32_t price) const {
    std::vector<std::pair<std::uint64_t, std::uint32_t>> out;
    for (std::uint64_t ref : books_.at(loc).side[side].at(price)) out.emplace_back(ref, orders_.at(ref).shares);
    return out;
  }
  const Integrity& integrity(std::uint16_t loc) const {
    static const Integrity kZero;
    if (loc >= cap_.instruments) return overflow_;
    auto it = books_.find(loc);
    return it == books_.end() ? kZero : it->second.integrity;
  }
  bool synced(std::uint16_t loc) const {
    auto it = books_.find(loc);
    return loc < cap_.instruments && (it == books_.end() || it->second.synced);
  }
  std::size_t live_orders() const { return orders_.size(); }
  std::vector<std::uint16_t> locates() const {
    std::vector<std::uint16_t> v;
    for (const auto& kv : books_) v.push_back(kv.first);
    return v;
  }

 private:
  struct ModelOrder {
    std::uint32_t shares, price;
    std::uint16_t locate;
    int side;
  };
  struct ModelBook {
    std::map<std::uint32_t, std::deque<std::uint64_t>> side[2];
    bool synced = true;
    Integrity integrity;
  };

  Integrity& counters(std::uint16_t loc) { return loc < cap_.instruments ? books_[loc].integrity : overflow_; }
  void arrive(std::uint16_t header, std::uint16_t own) {
    ModelBook& b = books_[own];
    if (!b.synced) ++b.integrity.while_unsynced;
    if (header != own) ++b.integrity.locate_mismatch;
  }
  void check_crossing(std::uint16_t loc) {
    ModelBook& b = books_[loc];
    if (b.side[0].empty() || b.side[1].empty()) return;
    const std::uint32_t bid = b.side[0].rbegin()->first, ask = b.side[1].begin()->first;
    if (bid > ask) ++b.integrity.crossed;
    else if (bid == ask) ++b.integrity.locked;
  }
  void unknown(std::uint16_t loc) {
    ++counters(loc).unknown_ref;
    if (loc < cap_.instruments) {
      arrive(loc, loc);
      check_crossing(loc);
    }
  }
  void insert(std::uint16_t loc, int side, std::uint64_t ref, std::uint32_t shares, std::uint32_t price) {
    ModelBook& b = books_[loc];
    if (orders_.count(ref)) {
      ++b.integrity.duplicate_ref;
      return;
    }
    const bool new_level = b.side[side].count(price) == 0;
    if (orders_.size() >= cap_.orders || (new_level && levels_ >= cap_.levels)) {
      ++b.integrity.capacity_rejects;
      b.synced = false;
      return;
    }
    if (new_level) ++levels_;
    b.side[side][price].push_back(ref);
    orders_[ref] = ModelOrder{shares, price, loc, side};
  }
  void remove(std::uint64_t ref) {
    const ModelOrder o = orders_.at(ref);
    auto& side = books_[o.locate].side[o.side];
    auto& q = side.at(o.price);
    for (auto it = q.begin(); it != q.end(); ++it) {
      if (*it == ref) {
        q.erase(it);
        break;
      }
    }
    if (q.empty()) {
      side.erase(o.price);
      --levels_;
    }
    orders_.erase(ref);
  }
  void on_add(std::uint16_t loc, const itch::AddOrder& a) {
    if (loc >= cap_.instruments) {
      ++overflow_.capacity_rejects;
      return;
    }
    arrive(loc, loc);
    if (a.side != 'B' && a.side != 'S') ++books_[loc].integrity.bad_side;
    else if (a.shares == 0) ++books_[loc].integrity.zero_shares;
    else insert(loc, a.side == 'B' ? 0 : 1, a.order_ref, a.shares, a.price);
    check_crossing(loc);
  }
  void on_reduce(std::uint16_t loc, std::uint64_t ref, std::uint32_t shares) {
    auto it = orders_.find(ref);
    if (it == orders_.end()) return unknown(loc);
    const std::uint16_t own = it->second.locate;
    arrive(loc, own);
    if (shares < it->second.shares) {
      it->second.shares -= shares;
    } else {
      if (shares > it->second.shares) ++books_[own].integrity.overfill;
      remove(ref);
    }
    check_crossing(own);
  }
  void on_delete(std::uint16_t loc, std::uint64_t ref) {
    auto it = orders_.find(ref);
    if (it == orders_.end()) return unknown(loc);
    const std::uint16_t own = it->second.locate;
    arrive(loc, own);
    remove(ref);
    check_crossing(own);
  }
  void on_replace(std::uint16_t loc, const itch::OrderReplace& r) {
    auto it = orders_.find(r.original_ref);
    if (it == orders_.end()) return unknown(loc);
    const ModelOrder o = it->second;
    arrive(loc, o.locate);
    remove(r.original_ref);
    if (r.shares == 0) ++books_[o.locate].integrity.zero_shares;
    else insert(o.locate, o.side, r.new_ref, r.shares, r.price);
    check_crossing(o.locate);
  }

  Capacity cap_;
  std::map<std::uint16_t, ModelBook> books_;
  std::unordered_map<std::uint64_t, ModelOrder> orders_;
  std::size_t levels_ = 0;
  Integrity overflow_;
};

// Empty when the set matches the model on this locate; otherwise what differs.
inline std::string compare(const BookSet& set, const Model& model, std::uint16_t loc) {
  for (int side = 0; side < 2; ++side) {
    const Side s = static_cast<Side>(side);
    const std::vector<Level> want = model.levels(loc, side);
    if (set.depth(loc, s) != want.size()) {
      return "depth side " + std::to_string(side) + ": " + std::to_string(set.depth(loc, s)) +
             " want " + std::to_string(want.size());
    }
    for (std::size_t i = 0; i < want.size(); ++i) {
      if (!(set.level(loc, s, i) == want[i])) return "level " + std::to_string(i) + " side " + std::to_string(side);
      std::vector<std::pair<std::uint64_t, std::uint32_t>> got;
      set.for_each_order(loc, s, i, [&](std::uint64_t ref, std::uint32_t sh) { got.emplace_back(ref, sh); });
      if (got != model.queue(loc, side, want[i].price)) return "queue of level " + std::to_string(i);
    }
  }
  if (!(set.integrity(loc) == model.integrity(loc))) return "integrity of locate " + std::to_string(loc);
  if (set.is_synced(loc) != model.synced(loc)) return "sync state";
  return {};
}

}  // namespace tickinfer::book::testing
