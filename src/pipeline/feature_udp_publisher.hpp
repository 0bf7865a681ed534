#pragma once
// Feature vectors over UDP ([features] udp = "HOST:PORT", a multicast group for consumers on other
// hosts): the records of one inbound datagram's ticks travel together, as many per datagram as
// fit (features/feature_datagram.hpp), sent when the batch ends or the datagram is full, so the
// compute thread pays one send() per inbound packet, not one per vector. Never blocks: a send the
// kernel refuses is counted (its records are lost; receivers see the gap in the numbering).
#include <cstdint>
#include <string>
#include <vector>

#include "features/feature_datagram.hpp"
#include "feed/udp_socket.hpp"
#include "pipeline/config.hpp"

namespace tickinfer::pipeline {

class FeatureUdpPublisher {
 public:
  // Error when the destination cannot be resolved or connected.
  FeatureUdpPublisher(const Endpoint& to, const std::string& multicast_interface, std::size_t width,
                      std::uint64_t feature_set_id);
  // Hot path: queue one record; sends first when the datagram is full.
  void add(const features::RingRecord& r, const double* values) noexcept;
  // Hot path: send what is queued (end of an inbound datagram).
  void flush() noexcept;

  std::uint64_t records() const noexcept { return next_record_; }     // numbered so far
  std::uint64_t datagrams() const noexcept { return datagrams_; }     // sent
  std::uint64_t send_failures() const noexcept { return failures_; }  // datagrams refused by the kernel

 private:
  feed::UdpSocket udp_;
  std::size_t width_, per_datagram_, pending_ = 0;
  std::uint64_t set_id_, next_record_ = 0, datagrams_ = 0, failures_ = 0;
  std::vector<std::uint8_t> buf_;
};

}  // namespace tickinfer::pipeline
