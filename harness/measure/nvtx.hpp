// NVTX3 ranges of the harness, in the registered domain "cuzk", with the phase path as message.
//
// A phase is a scoped object that opens and closes on the same thread, so phases use
// push/pop ranges (nested per thread in Nsight Systems). start/end ranges are provided for
// intervals that open on one thread and close on another. With CUZK_HAVE_NVTX == 0 every
// function is an empty inline and the NVTX headers are not included.
#pragma once
#include <cstdint>

#if CUZK_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

namespace cuzk::nvtx {

constexpr bool kCompiledIn = CUZK_HAVE_NVTX != 0;
inline constexpr bool compiled_in() { return kCompiledIn; }
constexpr const char* kDomain = "cuzk";

#if CUZK_HAVE_NVTX
inline nvtxDomainHandle_t domain() {
  static const nvtxDomainHandle_t d = nvtxDomainCreateA(kDomain);
  return d;
}

inline nvtxEventAttributes_t attributes(const char* message) {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = message;
  return a;
}

inline void push(const char* message) {
  nvtxEventAttributes_t a = attributes(message);
  nvtxDomainRangePushEx(domain(), &a);
}
inline void pop() { nvtxDomainRangePop(domain()); }
inline uint64_t start(const char* message) {
  nvtxEventAttributes_t a = attributes(message);
  return nvtxDomainRangeStartEx(domain(), &a);
}
inline void end(uint64_t id) { nvtxDomainRangeEnd(domain(), id); }
#else
inline void push(const char*) {}
inline void pop() {}
inline uint64_t start(const char*) { return 0; }
inline void end(uint64_t) {}
#endif

}  // namespace cuzk::nvtx
