// A minimal NVTX injection library for tests: NVTX loads it from NVTX_INJECTION64_PATH at the
// first NVTX call and calls InitializeInjectionNvtx2, which fills the CORE2 (domain) function
// table with recorders. Events are kept in memory; the test reads them through
// cuzk_nvtx_inject_events() (dlopen with RTLD_NOLOAD of the same path).
//
// Each event is one string: "create <domain>", "push <domain> <tid> <message>",
// "pop <domain> <tid>", "start <domain> <tid> <id> <message>", "end <domain> <tid> <id>".
#include <nvtx3/nvToolsExt.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace {

std::mutex g_mu;
std::vector<std::string>* g_events = new std::vector<std::string>;  // leaked on purpose
std::atomic<uint64_t> g_next_id{1};

struct Domain {
  std::string name;
};

std::string tid() { return std::to_string(static_cast<long>(::syscall(SYS_gettid))); }

std::string dname(nvtxDomainHandle_t d) { return d ? reinterpret_cast<Domain*>(d)->name : std::string("(default)"); }

std::string message(const nvtxEventAttributes_t* a) {
  if (!a) return "";
  if (a->messageType == NVTX_MESSAGE_TYPE_ASCII && a->message.ascii) return a->message.ascii;
  return "(non-ascii message)";
}

void add(std::string e) {
  std::lock_guard<std::mutex> lk(g_mu);
  g_events->push_back(std::move(e));
}

nvtxDomainHandle_t NVTX_API domain_create(const char* name) {
  add(std::string("create ") + (name ? name : ""));
  return reinterpret_cast<nvtxDomainHandle_t>(new Domain{name ? name : ""});
}
void NVTX_API domain_destroy(nvtxDomainHandle_t) {}
int NVTX_API push(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  add("push " + dname(d) + " " + tid() + " " + message(a));
  return 0;
}
int NVTX_API pop(nvtxDomainHandle_t d) {
  add("pop " + dname(d) + " " + tid());
  return 0;
}
nvtxRangeId_t NVTX_API start(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  uint64_t id = g_next_id++;
  add("start " + dname(d) + " " + tid() + " " + std::to_string(id) + " " + message(a));
  return id;
}
void NVTX_API end(nvtxDomainHandle_t d, nvtxRangeId_t id) { add("end " + dname(d) + " " + tid() + " " + std::to_string(id)); }

template <class F>
void set(NvtxFunctionTable table, unsigned size, unsigned id, F fn) {
  if (id < size && table[id]) *table[id] = reinterpret_cast<NvtxFunctionPointer>(fn);
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table) {
  auto* cb = static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (!cb || cb->struct_size < sizeof(NvtxExportTableCallbacks) || !cb->GetModuleFunctionTable) return 0;
  NvtxFunctionTable table = nullptr;
  unsigned size = 0;
  if (!cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size) || !table) return 0;
  set(table, size, NVTX_CBID_CORE2_DomainCreateA, domain_create);
  set(table, size, NVTX_CBID_CORE2_DomainDestroy, domain_destroy);
  set(table, size, NVTX_CBID_CORE2_DomainRangePushEx, push);
  set(table, size, NVTX_CBID_CORE2_DomainRangePop, pop);
  set(table, size, NVTX_CBID_CORE2_DomainRangeStartEx, start);
  set(table, size, NVTX_CBID_CORE2_DomainRangeEnd, end);
  add("initialized");
  return 1;
}

// For the test: the events so far, one per line, in a malloc'd string the caller frees.
__attribute__((visibility("default"))) char* cuzk_nvtx_inject_events() {
  std::string all;
  {
    std::lock_guard<std::mutex> lk(g_mu);
    for (const auto& e : *g_events) all += e + "\n";
  }
  char* out = static_cast<char*>(std::malloc(all.size() + 1));
  if (out) std::memcpy(out, all.c_str(), all.size() + 1);
  return out;
}

}  // extern "C"
