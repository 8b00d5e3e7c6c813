// The gRPC face of the daemon: cuzk.daemon.v1.ProvingEngine over a JobManager, each refusal a
// gRPC status with the manager's message (docs/daemon.md#errors).
#pragma once
#include <string>

#include "cuzk/daemon/v1/proving.grpc.pb.h"
#include "daemon/server/job_manager.hpp"

namespace cuzk::daemon {

class ProvingService final : public v1::ProvingEngine::Service {
 public:
  ProvingService(JobManager& jobs, std::string preset, std::string gpu) : jobs_(jobs), preset_(std::move(preset)), gpu_(std::move(gpu)) {}

  grpc::Status SubmitProof(grpc::ServerContext*, const v1::SubmitRequest*, v1::SubmitReply*) override;
  grpc::Status AwaitProof(grpc::ServerContext*, const v1::AwaitRequest*, v1::AwaitReply*) override;
  grpc::Status Prove(grpc::ServerContext*, const v1::SubmitRequest*, v1::AwaitReply*) override;
  grpc::Status CancelProof(grpc::ServerContext*, const v1::CancelRequest*, v1::CancelReply*) override;
  grpc::Status GetStatus(grpc::ServerContext*, const v1::StatusRequest*, v1::StatusReply*) override;
  grpc::Status GetMetrics(grpc::ServerContext*, const v1::MetricsRequest*, v1::MetricsReply*) override;
  grpc::Status PreloadParams(grpc::ServerContext*, const v1::ParamsRequest*, v1::ParamsReply*) override;
  grpc::Status EvictParams(grpc::ServerContext*, const v1::ParamsRequest*, v1::ParamsReply*) override;

 private:
  JobManager& jobs_;
  std::string preset_, gpu_;
};

}  // namespace cuzk::daemon
