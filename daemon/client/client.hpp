// Connecting to cuzkd (docs/daemon.md): the channel, the wait for its health service, and
// the names of gRPC status codes for messages.
#pragma once
#include <grpcpp/grpcpp.h>

#include <functional>
#include <memory>
#include <string>

#include "cuzk/daemon/v1/proving.grpc.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"

namespace cuzk::daemon {

// `target`: a unix socket path (with or without "unix:"), or HOST:PORT for TCP.
std::shared_ptr<grpc::Channel> connect(const std::string& target);

// Polls grpc.health.v1.Health/Check until SERVING, at most timeout_s, and only while
// `keep_waiting` (when given) says the daemon can still answer (a daemon this process started
// and that has exited never will). False then or at the timeout; `last` says what was seen
// (unreachable, NOT_SERVING).
bool wait_serving(const std::shared_ptr<grpc::Channel>& ch, double timeout_s, std::string& last,
                  const std::function<bool()>& keep_waiting = {});

// "RESOURCE_EXHAUSTED", "NOT_FOUND", ...
const char* status_name(grpc::StatusCode c);

// "NOT_FOUND: no job 'x'"
std::string describe(const grpc::Status& s);

}  // namespace cuzk::daemon
