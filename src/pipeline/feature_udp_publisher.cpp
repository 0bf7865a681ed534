#include "pipeline/feature_udp_publisher.hpp"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "tickinfer/error.hpp"

namespace tickinfer::pipeline {

FeatureUdpPublisher::FeatureUdpPublisher(const Endpoint& to, const std::string& multicast_interface, std::size_t width,
                                         std::uint64_t feature_set_id)
    : udp_(feed::UdpSocket::sender(multicast_interface)), width_(width),
      per_datagram_(features::feature_records_per_datagram(width)), set_id_(feature_set_id),
      buf_(features::kFeatureDatagramMaxBytes, 0) {
  const sockaddr_in a = feed::make_address(to.host, to.port);
  // Connected: send() skips the per-datagram route lookup.
  if (::connect(udp_.fd(), reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0)
    throw Error("[features] udp " + to.host + ":" + std::to_string(to.port) + ": connect failed: " + std::strerror(errno));
}

void FeatureUdpPublisher::add(const features::RingRecord& r, const double* values) noexcept {
  if (pending_ == per_datagram_) flush();
  features::encode_feature_record(
      buf_.data() + features::kFeatureDatagramHeaderBytes + pending_ * features::feature_record_bytes(width_), r, values,
      width_);
  ++pending_;
}

void FeatureUdpPublisher::flush() noexcept {
  if (pending_ == 0) return;
  features::encode_feature_header(buf_.data(), width_, pending_, next_record_, set_id_);
  const std::size_t bytes = features::kFeatureDatagramHeaderBytes + pending_ * features::feature_record_bytes(width_);
  if (::send(udp_.fd(), buf_.data(), bytes, MSG_DONTWAIT) == static_cast<ssize_t>(bytes)) ++datagrams_;
  else ++failures_;
  next_record_ += pending_;
  pending_ = 0;
}

}  // namespace tickinfer::pipeline
