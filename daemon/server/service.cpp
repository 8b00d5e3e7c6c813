#include "daemon/server/service.hpp"

#include "harness/measure/provenance.hpp"

namespace cuzk::daemon {
namespace {

grpc::Status to_status(const ServiceError& e) {
  using C = ServiceError::Code;
  switch (e.code) {
    case C::invalid: return {grpc::StatusCode::INVALID_ARGUMENT, e.what()};
    case C::not_found: return {grpc::StatusCode::NOT_FOUND, e.what()};
    case C::permission_denied: return {grpc::StatusCode::PERMISSION_DENIED, e.what()};
    case C::resource_exhausted: return {grpc::StatusCode::RESOURCE_EXHAUSTED, e.what()};
    case C::already_exists: return {grpc::StatusCode::ALREADY_EXISTS, e.what()};
    case C::unavailable: return {grpc::StatusCode::UNAVAILABLE, e.what()};
  }
  return {grpc::StatusCode::INTERNAL, e.what()};
}

// Runs `fn`, mapping refusals to their status and anything else to INTERNAL with its message:
// one bad request never takes the daemon down.
template <typename Fn>
grpc::Status guarded(Fn&& fn) {
  try {
    fn();
    return grpc::Status::OK;
  } catch (const ServiceError& e) {
    return to_status(e);
  } catch (const std::exception& e) {
    return {grpc::StatusCode::INTERNAL, e.what()};
  }
}

Priority priority_of(v1::Priority p) {
  switch (p) {
    case v1::LOW: return Priority::low;
    case v1::HIGH: return Priority::high;
    case v1::CRITICAL: return Priority::critical;
    default: return Priority::normal;
  }
}

void fill(const JobView& v, v1::JobStatus* out) {
  out->set_job_id(v.id);
  out->set_request_id(v.request_id);
  out->set_state(v1::JobState(int(v.state)));
  out->set_priority(v1::Priority(int(v.priority)));
  out->set_reason(v.reason);
  out->set_proof_path(v.proof_path);
  out->set_verified(v.verified);
  out->set_batch_size(v.batch_size);
  out->set_restarts(v.restarts);
  for (const auto& [path, ns] : v.phases) {
    auto* p = out->add_phases();
    p->set_path(path);
    p->set_wall_ns(ns);
  }
}

JobManager::Submitted submit(JobManager& jobs, const v1::SubmitRequest& r) {
  if (!v1::Priority_IsValid(r.priority()))
    throw ServiceError(ServiceError::Code::invalid, "priority: expected LOW, NORMAL, HIGH or CRITICAL");
  switch (r.input_case()) {
    case v1::SubmitRequest::kInputJson: return jobs.submit(r.request_id(), r.kind(), priority_of(r.priority()), r.input_json(), false);
    case v1::SubmitRequest::kInputPath: return jobs.submit(r.request_id(), r.kind(), priority_of(r.priority()), r.input_path(), true);
    default: throw ServiceError(ServiceError::Code::invalid, "no input: set input_json or input_path");
  }
}

}  // namespace

grpc::Status ProvingService::SubmitProof(grpc::ServerContext*, const v1::SubmitRequest* req, v1::SubmitReply* rep) {
  return guarded([&] {
    const auto s = submit(jobs_, *req);
    rep->set_job_id(s.id);
    rep->set_queue_position(s.position);
    rep->set_duplicate(s.duplicate);
  });
}

grpc::Status ProvingService::AwaitProof(grpc::ServerContext* ctx, const v1::AwaitRequest* req, v1::AwaitReply* rep) {
  return guarded([&] {
    if (!(req->timeout_seconds() >= 0)) throw ServiceError(ServiceError::Code::invalid, "timeout_seconds: must be 0 or more");
    bool timed_out = false;
    fill(jobs_.await(req->job_id(), req->timeout_seconds(), [ctx] { return ctx->IsCancelled(); }, timed_out),
         rep->mutable_job());
    rep->set_timed_out(timed_out);
  });
}

grpc::Status ProvingService::Prove(grpc::ServerContext* ctx, const v1::SubmitRequest* req, v1::AwaitReply* rep) {
  return guarded([&] {
    const auto s = submit(jobs_, *req);
    bool timed_out = false;
    fill(jobs_.await(s.id, 0, [ctx] { return ctx->IsCancelled(); }, timed_out), rep->mutable_job());
  });
}

grpc::Status ProvingService::CancelProof(grpc::ServerContext*, const v1::CancelRequest* req, v1::CancelReply* rep) {
  return guarded([&] { rep->set_state(v1::JobState(int(jobs_.cancel(req->job_id())))); });
}

grpc::Status ProvingService::GetStatus(grpc::ServerContext*, const v1::StatusRequest*, v1::StatusReply* rep) {
  return guarded([&] {
    const StatusView s = jobs_.status();
    for (Priority p : {Priority::critical, Priority::high, Priority::normal, Priority::low}) {
      auto* q = rep->add_queued();
      q->set_priority(v1::Priority(int(p)));
      q->set_jobs(s.queued.at(priority_name(p)));
    }
    for (const auto& id : s.running) rep->add_running(id);
    for (const auto& p : s.resident_params) rep->add_resident_params(p);
    rep->set_pinned_bytes(0);
    rep->set_backend(s.backend);
    rep->set_gpu(gpu_);
    rep->set_draining(s.draining);
    rep->set_pending_limit(s.pending_limit);
    rep->set_completed(s.completed);
    rep->set_failed(s.failed);
    rep->set_preset(preset_);
    rep->set_provenance_json(provenance_json().dump());
  });
}

grpc::Status ProvingService::GetMetrics(grpc::ServerContext*, const v1::MetricsRequest*, v1::MetricsReply* rep) {
  return guarded([&] { rep->set_prometheus_text(jobs_.metrics()); });
}

grpc::Status ProvingService::PreloadParams(grpc::ServerContext*, const v1::ParamsRequest* req, v1::ParamsReply* rep) {
  return guarded([&] {
    for (const auto& p : jobs_.preload_params(req->path())) rep->add_resident_params(p);
  });
}

grpc::Status ProvingService::EvictParams(grpc::ServerContext*, const v1::ParamsRequest* req, v1::ParamsReply* rep) {
  return guarded([&] {
    for (const auto& p : jobs_.evict_params(req->path())) rep->add_resident_params(p);
  });
}

}  // namespace cuzk::daemon
