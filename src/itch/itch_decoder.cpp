#include "itch/itch_decoder.hpp"

#include <cstring>

#include "feed/byte_order.hpp"

namespace tickinfer::itch {
namespace {

using feed::load_be16;
using feed::load_be32;
using feed::load_be48;
using feed::load_be64;

// The fixed length of each type (type byte included), from the 5.0 spec's field tables. constexpr
// so that decode()'s `len != length_of(Type::X)` folds to a compare with an immediate.
constexpr std::size_t length_of(Type t) noexcept {
  switch (t) {
    case Type::SystemEvent: return 12;
    case Type::StockDirectory: return 39;
    case Type::StockTradingAction: return 25;
    case Type::RegShoRestriction: return 20;
    case Type::MarketParticipantPosition: return 26;
    case Type::MwcbDeclineLevel: return 35;
    case Type::MwcbStatus: return 12;
    case Type::IpoQuotingPeriod: return 28;
    case Type::LuldAuctionCollar: return 35;
    case Type::OperationalHalt: return 21;
    case Type::AddOrder: return 36;
    case Type::AddOrderMpid: return 40;
    case Type::OrderExecuted: return 31;
    case Type::OrderExecutedWithPrice: return 36;
    case Type::OrderCancel: return 23;
    case Type::OrderDelete: return 19;
    case Type::OrderReplace: return 35;
    case Type::Trade: return 44;
    case Type::CrossTrade: return 40;
    case Type::BrokenTrade: return 19;
    case Type::Noii: return 50;
    case Type::RetailPriceImprovement: return 20;
    case Type::DirectListingCapitalRaise: return 48;
  }
  return 0;
}

template <std::size_t N>
void copy_alpha(char (&dst)[N], const std::uint8_t* src) noexcept {
  std::memcpy(dst, src, N);
}

// One loader per body, each reading the offsets of the spec's table for its type. They return
// the struct by value so decode() assigns a whole union member (which makes it the active one).
SystemEvent load_s(const std::uint8_t* m) noexcept {
  SystemEvent b;
  b.event_code = static_cast<char>(m[11]);
  return b;
}

StockDirectory load_r(const std::uint8_t* m) noexcept {
  StockDirectory b;
  copy_alpha(b.stock, m + 11);
  b.market_category = static_cast<char>(m[19]);
  b.financial_status = static_cast<char>(m[20]);
  b.round_lot_size = load_be32(m + 21);
  b.round_lots_only = static_cast<char>(m[25]);
  b.issue_classification = static_cast<char>(m[26]);
  copy_alpha(b.issue_sub_type, m + 27);
  b.authenticity = static_cast<char>(m[29]);
  b.short_sale_threshold = static_cast<char>(m[30]);
  b.ipo_flag = static_cast<char>(m[31]);
  b.luld_reference_tier = static_cast<char>(m[32]);
  b.etp_flag = static_cast<char>(m[33]);
  b.etp_leverage_factor = load_be32(m + 34);
  b.inverse_indicator = static_cast<char>(m[38]);
  return b;
}

StockTradingAction load_h_upper(const std::uint8_t* m) noexcept {
  StockTradingAction b;
  copy_alpha(b.stock, m + 11);
  b.trading_state = static_cast<char>(m[19]);
  b.reserved = static_cast<char>(m[20]);
  copy_alpha(b.reason, m + 21);
  return b;
}

RegShoRestriction load_y(const std::uint8_t* m) noexcept {
  RegShoRestriction b;
  copy_alpha(b.stock, m + 11);
  b.action = static_cast<char>(m[19]);
  return b;
}

MarketParticipantPosition load_l(const std::uint8_t* m) noexcept {
  MarketParticipantPosition b;
  copy_alpha(b.mpid, m + 11);
  copy_alpha(b.stock, m + 15);
  b.primary_market_maker = static_cast<char>(m[23]);
  b.mode = static_cast<char>(m[24]);
  b.state = static_cast<char>(m[25]);
  return b;
}

MwcbDeclineLevel load_v(const std::uint8_t* m) noexcept {
  return MwcbDeclineLevel{load_be64(m + 11), load_be64(m + 19), load_be64(m + 27)};
}

MwcbStatus load_w(const std::uint8_t* m) noexcept { return MwcbStatus{static_cast<char>(m[11])}; }

IpoQuotingPeriod load_k(const std::uint8_t* m) noexcept {
  IpoQuotingPeriod b;
  copy_alpha(b.stock, m + 11);
  b.release_time_s = load_be32(m + 19);
  b.release_qualifier = static_cast<char>(m[23]);
  b.ipo_price = load_be32(m + 24);
  return b;
}

LuldAuctionCollar load_j(const std::uint8_t* m) noexcept {
  LuldAuctionCollar b;
  copy_alpha(b.stock, m + 11);
  b.reference_price = load_be32(m + 19);
  b.upper_price = load_be32(m + 23);
  b.lower_price = load_be32(m + 27);
  b.extension = load_be32(m + 31);
  return b;
}

OperationalHalt load_h_lower(const std::uint8_t* m) noexcept {
  OperationalHalt b;
  copy_alpha(b.stock, m + 11);
  b.market_code = static_cast<char>(m[19]);
  b.action = static_cast<char>(m[20]);
  return b;
}

// 'A' and 'F' share their first 36 bytes; 'A' has no attribution, so it gets four spaces (an
// empty alpha field), and 'F' reads its MPID at 36.
AddOrder load_add(const std::uint8_t* m, bool with_mpid) noexcept {
  AddOrder b;
  b.order_ref = load_be64(m + 11);
  b.side = static_cast<char>(m[19]);
  b.shares = load_be32(m + 20);
  copy_alpha(b.stock, m + 24);
  b.price = load_be32(m + 32);
  if (with_mpid) {
    copy_alpha(b.mpid, m + 36);
  } else {
    std::memcpy(b.mpid, "    ", 4);
  }
  return b;
}

OrderExecuted load_e(const std::uint8_t* m) noexcept {
  return OrderExecuted{load_be64(m + 11), load_be32(m + 19), load_be64(m + 23)};
}

OrderExecutedWithPrice load_c(const std::uint8_t* m) noexcept {
  OrderExecutedWithPrice b;
  b.order_ref = load_be64(m + 11);
  b.shares = load_be32(m + 19);
  b.match_number = load_be64(m + 23);
  b.printable = static_cast<char>(m[31]);
  b.price = load_be32(m + 32);
  return b;
}

OrderCancel load_x(const std::uint8_t* m) noexcept { return OrderCancel{load_be64(m + 11), load_be32(m + 19)}; }

OrderDelete load_d(const std::uint8_t* m) noexcept { return OrderDelete{load_be64(m + 11)}; }

OrderReplace load_u(const std::uint8_t* m) noexcept {
  return OrderReplace{load_be64(m + 11), load_be64(m + 19), load_be32(m + 27), load_be32(m + 31)};
}

Trade load_p(const std::uint8_t* m) noexcept {
  Trade b;
  b.order_ref = load_be64(m + 11);
  b.side = static_cast<char>(m[19]);
  b.shares = load_be32(m + 20);
  copy_alpha(b.stock, m + 24);
  b.price = load_be32(m + 32);
  b.match_number = load_be64(m + 36);
  return b;
}

CrossTrade load_q(const std::uint8_t* m) noexcept {
  CrossTrade b;
  b.shares = load_be64(m + 11);
  copy_alpha(b.stock, m + 19);
  b.price = load_be32(m + 27);
  b.match_number = load_be64(m + 31);
  b.cross_type = static_cast<char>(m[39]);
  return b;
}

BrokenTrade load_b(const std::uint8_t* m) noexcept { return BrokenTrade{load_be64(m + 11)}; }

Noii load_i(const std::uint8_t* m) noexcept {
  Noii b;
  b.paired_shares = load_be64(m + 11);
  b.imbalance_shares = load_be64(m + 19);
  b.direction = static_cast<char>(m[27]);
  copy_alpha(b.stock, m + 28);
  b.far_price = load_be32(m + 36);
  b.near_price = load_be32(m + 40);
  b.reference_price = load_be32(m + 44);
  b.cross_type = static_cast<char>(m[48]);
  b.price_variation = static_cast<char>(m[49]);
  return b;
}

RetailPriceImprovement load_n(const std::uint8_t* m) noexcept {
  RetailPriceImprovement b;
  copy_alpha(b.stock, m + 11);
  b.interest = static_cast<char>(m[19]);
  return b;
}

DirectListingCapitalRaise load_o(const std::uint8_t* m) noexcept {
  DirectListingCapitalRaise b;
  copy_alpha(b.stock, m + 11);
  b.open_eligibility = static_cast<char>(m[19]);
  b.min_price = load_be32(m + 20);
  b.max_price = load_be32(m + 24);
  b.near_price = load_be32(m + 28);
  b.near_time = load_be64(m + 32);
  b.lower_collar = load_be32(m + 40);
  b.upper_collar = load_be32(m + 44);
  return b;
}

Header load_header(const std::uint8_t* m) noexcept {
  return Header{static_cast<Type>(m[0]), load_be16(m + 1), load_be16(m + 3), load_be48(m + 5)};
}

}  // namespace

std::size_t message_length(std::uint8_t type) noexcept {
  // length_of() answers 0 for a byte outside the enum, so this is exact for all 256 bytes.
  return length_of(static_cast<Type>(type));
}

std::string_view to_string(DecodeStatus s) noexcept {
  switch (s) {
    case DecodeStatus::Ok: return "ok";
    case DecodeStatus::Empty: return "empty";
    case DecodeStatus::UnknownType: return "unknown type";
    case DecodeStatus::WrongLength: return "wrong length";
  }
  return "?";
}

// Each case checks the exact length first, then fills the header and the body; a refused message
// returns before `out` is written.
#define TICKINFER_ITCH_CASE(TYPE, MEMBER, LOAD)                        \
  case Type::TYPE:                                                     \
    if (len != length_of(Type::TYPE)) return DecodeStatus::WrongLength; \
    out.header = load_header(msg);                                     \
    out.MEMBER = LOAD;                                                 \
    return DecodeStatus::Ok;

DecodeStatus decode(const std::uint8_t* msg, std::size_t len, Message& out) noexcept {
  if (len == 0) return DecodeStatus::Empty;
  switch (static_cast<Type>(msg[0])) {
    TICKINFER_ITCH_CASE(SystemEvent, system_event, load_s(msg))
    TICKINFER_ITCH_CASE(StockDirectory, stock_directory, load_r(msg))
    TICKINFER_ITCH_CASE(StockTradingAction, trading_action, load_h_upper(msg))
    TICKINFER_ITCH_CASE(RegShoRestriction, reg_sho, load_y(msg))
    TICKINFER_ITCH_CASE(MarketParticipantPosition, participant, load_l(msg))
    TICKINFER_ITCH_CASE(MwcbDeclineLevel, mwcb_decline, load_v(msg))
    TICKINFER_ITCH_CASE(MwcbStatus, mwcb_status, load_w(msg))
    TICKINFER_ITCH_CASE(IpoQuotingPeriod, ipo, load_k(msg))
    TICKINFER_ITCH_CASE(LuldAuctionCollar, luld, load_j(msg))
    TICKINFER_ITCH_CASE(OperationalHalt, operational_halt, load_h_lower(msg))
    TICKINFER_ITCH_CASE(AddOrder, add, load_add(msg, false))
    TICKINFER_ITCH_CASE(AddOrderMpid, add, load_add(msg, true))
    TICKINFER_ITCH_CASE(OrderExecuted, executed, load_e(msg))
    TICKINFER_ITCH_CASE(OrderExecutedWithPrice, executed_with_price, load_c(msg))
    TICKINFER_ITCH_CASE(OrderCancel, cancel, load_x(msg))
    TICKINFER_ITCH_CASE(OrderDelete, del, load_d(msg))
    TICKINFER_ITCH_CASE(OrderReplace, replace, load_u(msg))
    TICKINFER_ITCH_CASE(Trade, trade, load_p(msg))
    TICKINFER_ITCH_CASE(CrossTrade, cross, load_q(msg))
    TICKINFER_ITCH_CASE(BrokenTrade, broken, load_b(msg))
    TICKINFER_ITCH_CASE(Noii, noii, load_i(msg))
    TICKINFER_ITCH_CASE(RetailPriceImprovement, rpii, load_n(msg))
    TICKINFER_ITCH_CASE(DirectListingCapitalRaise, direct_listing, load_o(msg))
  }
  return DecodeStatus::UnknownType;
}

#undef TICKINFER_ITCH_CASE

}  // namespace tickinfer::itch
