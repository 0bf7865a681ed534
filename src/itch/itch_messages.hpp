#pragma once
// NASDAQ TotalView-ITCH 5.0 messages, decoded to host order. The wire form (big-endian, fixed
// length per type, the 11-byte common prefix) is in docs/itch.md; these structs are what the
// decoder hands to the order book and the tools. Plain and trivially copyable, like md::Event, so
// a decoded message passes through rings and test vectors by memcpy.
//
// Prices stay ITCH's integers: Price(4) is 1e-4 of a dollar (the same integer LOBSTER writes),
// Price(8) 1e-8. Symbols keep their 8 bytes with the spec's right-padding spaces; symbol_view()
// strips them.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

namespace tickinfer::itch {

// Every message type of the 5.0 spec, as its ASCII code (case matters: 'h' is not 'H').
enum class Type : std::uint8_t {
  SystemEvent = 'S',
  StockDirectory = 'R',
  StockTradingAction = 'H',
  RegShoRestriction = 'Y',
  MarketParticipantPosition = 'L',
  MwcbDeclineLevel = 'V',
  MwcbStatus = 'W',
  IpoQuotingPeriod = 'K',
  LuldAuctionCollar = 'J',
  OperationalHalt = 'h',
  AddOrder = 'A',
  AddOrderMpid = 'F',
  OrderExecuted = 'E',
  OrderExecutedWithPrice = 'C',
  OrderCancel = 'X',
  OrderDelete = 'D',
  OrderReplace = 'U',
  Trade = 'P',
  CrossTrade = 'Q',
  BrokenTrade = 'B',
  Noii = 'I',
  RetailPriceImprovement = 'N',
  DirectListingCapitalRaise = 'O',
};

// The exact length of each type, message type byte included; 0 for a byte that is no type.
std::size_t message_length(std::uint8_t type) noexcept;
inline constexpr std::size_t kMaxMessageBytes = 50;  // 'I' (NOII), the longest type
inline constexpr std::size_t kHeaderBytes = 11;      // type, locate, tracking, timestamp
inline constexpr std::int64_t kNsPerDay = 86'400'000'000'000;

// The common prefix, present in every type at the same offsets.
struct Header {
  Type type = Type::SystemEvent;
  std::uint16_t locate = 0;        // stock locate code of the day; 0 for S, V, W (and K, per spec)
  std::uint16_t tracking = 0;      // Nasdaq internal; carried, never interpreted
  std::uint64_t timestamp_ns = 0;  // ns since midnight, exchange local time (US Eastern)
};

using Symbol = char[8];  // ASCII, left-justified, space-padded

// The symbol without its padding spaces.
inline std::string_view symbol_view(const char (&s)[8]) noexcept {
  std::size_t n = 8;
  while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\0')) --n;
  return {s, n};
}

struct SystemEvent {            // 'S'
  char event_code;              // O S Q M E C
};
struct StockDirectory {         // 'R'
  Symbol stock;
  char market_category;
  char financial_status;
  std::uint32_t round_lot_size;
  char round_lots_only;
  char issue_classification;
  char issue_sub_type[2];
  char authenticity;
  char short_sale_threshold;
  char ipo_flag;
  char luld_reference_tier;
  char etp_flag;
  std::uint32_t etp_leverage_factor;
  char inverse_indicator;
};
struct StockTradingAction {     // 'H'
  Symbol stock;
  char trading_state;           // H P Q T
  char reserved;
  char reason[4];
};
struct RegShoRestriction {      // 'Y'
  Symbol stock;
  char action;                  // '0' '1' '2'
};
struct MarketParticipantPosition {  // 'L'
  char mpid[4];
  Symbol stock;
  char primary_market_maker;
  char mode;
  char state;
};
struct MwcbDeclineLevel {       // 'V', Price(8)
  std::uint64_t level1;
  std::uint64_t level2;
  std::uint64_t level3;
};
struct MwcbStatus {             // 'W'
  char breached_level;
};
struct IpoQuotingPeriod {       // 'K'
  Symbol stock;
  std::uint32_t release_time_s;  // seconds since midnight
  char release_qualifier;
  std::uint32_t ipo_price;       // Price(4)
};
struct LuldAuctionCollar {      // 'J'
  Symbol stock;
  std::uint32_t reference_price;  // Price(4)
  std::uint32_t upper_price;
  std::uint32_t lower_price;
  std::uint32_t extension;
};
struct OperationalHalt {        // 'h'
  Symbol stock;
  char market_code;             // Q B X
  char action;                  // H T
};
struct AddOrder {               // 'A' and 'F' ('A' leaves mpid as four spaces)
  std::uint64_t order_ref;
  char side;                    // 'B' or 'S'
  std::uint32_t shares;
  Symbol stock;
  std::uint32_t price;          // Price(4)
  char mpid[4];
};
struct OrderExecuted {          // 'E'
  std::uint64_t order_ref;
  std::uint32_t shares;
  std::uint64_t match_number;
};
struct OrderExecutedWithPrice {  // 'C'
  std::uint64_t order_ref;
  std::uint32_t shares;
  std::uint64_t match_number;
  char printable;               // 'Y' or 'N'
  std::uint32_t price;          // Price(4), the execution's own price
};
struct OrderCancel {            // 'X'
  std::uint64_t order_ref;
  std::uint32_t shares;         // cancelled, not remaining
};
struct OrderDelete {            // 'D'
  std::uint64_t order_ref;
};
struct OrderReplace {           // 'U'
  std::uint64_t original_ref;
  std::uint64_t new_ref;
  std::uint32_t shares;         // the new order's total
  std::uint32_t price;          // Price(4)
};
struct Trade {                  // 'P' (non-displayed order; never touches the book)
  std::uint64_t order_ref;
  char side;
  std::uint32_t shares;         // 4 bytes here, 8 in 'Q'
  Symbol stock;
  std::uint32_t price;
  std::uint64_t match_number;
};
struct CrossTrade {             // 'Q'
  std::uint64_t shares;
  Symbol stock;
  std::uint32_t price;
  std::uint64_t match_number;
  char cross_type;              // O C H (I in some third-party tables)
};
struct BrokenTrade {            // 'B'
  std::uint64_t match_number;
};
struct Noii {                   // 'I'
  std::uint64_t paired_shares;
  std::uint64_t imbalance_shares;
  char direction;               // B S N O P
  Symbol stock;
  std::uint32_t far_price;
  std::uint32_t near_price;
  std::uint32_t reference_price;
  char cross_type;              // O C H A
  char price_variation;
};
struct RetailPriceImprovement {  // 'N'
  Symbol stock;
  char interest;                // B S A N
};
struct DirectListingCapitalRaise {  // 'O'
  Symbol stock;
  char open_eligibility;
  std::uint32_t min_price;
  std::uint32_t max_price;
  std::uint32_t near_price;
  std::uint64_t near_time;      // unit not stated by the spec
  std::uint32_t lower_collar;
  std::uint32_t upper_collar;
};

// One decoded message: the header and the body its type selects.
struct Message {
  Header header;
  union {
    SystemEvent system_event;
    StockDirectory stock_directory;
    StockTradingAction trading_action;
    RegShoRestriction reg_sho;
    MarketParticipantPosition participant;
    MwcbDeclineLevel mwcb_decline;
    MwcbStatus mwcb_status;
    IpoQuotingPeriod ipo;
    LuldAuctionCollar luld;
    OperationalHalt operational_halt;
    AddOrder add;
    OrderExecuted executed;
    OrderExecutedWithPrice executed_with_price;
    OrderCancel cancel;
    OrderDelete del;
    OrderReplace replace;
    Trade trade;
    CrossTrade cross;
    BrokenTrade broken;
    Noii noii;
    RetailPriceImprovement rpii;
    DirectListingCapitalRaise direct_listing;
  };
  Message() : add{} {}
  Type type() const noexcept { return header.type; }
};

static_assert(std::is_trivially_copyable_v<Message>);

}  // namespace tickinfer::itch
