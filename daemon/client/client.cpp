#include "daemon/client/client.hpp"

#include <fmt/core.h>

#include <chrono>
#include <thread>

namespace cuzk::daemon {

std::shared_ptr<grpc::Channel> connect(const std::string& target) {
  std::string t = target;
  if (t.rfind("unix:", 0) != 0 && (t.find('/') != std::string::npos || t.find(':') == std::string::npos)) t = "unix:" + t;
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  // Subchannels of this channel only: gRPC shares them across channels by default, so a channel
  // made after a daemon restarted on the same socket could get the dead one's connection and fail
  // its first call with UNAVAILABLE ("Broken pipe").
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return grpc::CreateCustomChannel(t, grpc::InsecureChannelCredentials(), args);
}

bool wait_serving(const std::shared_ptr<grpc::Channel>& ch, double timeout_s, std::string& last,
                  const std::function<bool()>& keep_waiting) {
  auto stub = grpc::health::v1::Health::NewStub(ch);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  last = "no answer";
  for (;;) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
    grpc::health::v1::HealthCheckRequest req;
    grpc::health::v1::HealthCheckResponse rep;
    const grpc::Status s = stub->Check(&ctx, req, &rep);
    if (s.ok() && rep.status() == grpc::health::v1::HealthCheckResponse::SERVING) return true;
    last = s.ok() ? grpc::health::v1::HealthCheckResponse::ServingStatus_Name(rep.status()) : describe(s);
    if (std::chrono::steady_clock::now() >= deadline || (keep_waiting && !keep_waiting())) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

const char* status_name(grpc::StatusCode c) {
  switch (c) {
    case grpc::OK: return "OK";
    case grpc::CANCELLED: return "CANCELLED";
    case grpc::UNKNOWN: return "UNKNOWN";
    case grpc::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case grpc::DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case grpc::NOT_FOUND: return "NOT_FOUND";
    case grpc::ALREADY_EXISTS: return "ALREADY_EXISTS";
    case grpc::PERMISSION_DENIED: return "PERMISSION_DENIED";
    case grpc::UNAUTHENTICATED: return "UNAUTHENTICATED";
    case grpc::RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case grpc::FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case grpc::ABORTED: return "ABORTED";
    case grpc::OUT_OF_RANGE: return "OUT_OF_RANGE";
    case grpc::UNIMPLEMENTED: return "UNIMPLEMENTED";
    case grpc::INTERNAL: return "INTERNAL";
    case grpc::UNAVAILABLE: return "UNAVAILABLE";
    case grpc::DATA_LOSS: return "DATA_LOSS";
    default: return "UNKNOWN";
  }
}

std::string describe(const grpc::Status& s) { return fmt::format("{}: {}", status_name(s.error_code()), s.error_message()); }

}  // namespace cuzk::daemon
