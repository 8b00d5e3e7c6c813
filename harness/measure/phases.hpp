// The required phase names of docs/architecture.md, in one place: the same strings are NVTX
// messages, record keys, report rows and gate keys, so suites (the `phases` key), reports and
// gates check names against this list instead of keeping their own copies.
#pragma once
#include <algorithm>
#include <array>
#include <string>
#include <string_view>

namespace cuzk {

inline constexpr std::array<std::string_view, 14> kRequiredPhases = {
    "proof",                 // one proving job (a sector: several partition circuits)
    "proof/queue",           // waiting in the engine's queue
    "proof/srs_load",        // loading parameters (0 when already resident)
    "proof/synth",           // synthesis of all partition circuits (CPU)
    "proof/prove",           // the proving stage (GPU, or CPU on the CPU backend)
    "proof/prove/pin_abc",   // pinning a/b/c (pinned variant only)
    "proof/prove/h2d",       // host-to-device copies
    "proof/prove/ntt_h",     // H polynomial: iNTT, coset NTT, pointwise, iNTT
    "proof/prove/msm_h",     // H-query MSM (G1)
    "proof/prove/msm_l",     // L-query MSM (G1)
    "proof/prove/msm_a",     // A-query MSM (G1)
    "proof/prove/msm_b_g1",  // B-query MSM (G1)
    "proof/prove/msm_b_g2",  // B-query MSM (G2; on CPU threads concurrently with the GPU, or on the GPU with CUZK_GPU_G2)
    "proof/prove/assemble",  // proof assembly
};

// Whether `path` is a direct child of `parent` in the phase tree ("proof/prove/msm_h" of
// "proof/prove"; not "proof/prove/h2d/srs"). Accounting, traces and the GPU counters pass ask it.
inline bool is_direct_child(std::string_view parent, std::string_view path) {
  return path.size() > parent.size() + 1 && path.substr(0, parent.size()) == parent && path[parent.size()] == '/' &&
         path.find('/', parent.size() + 1) == std::string_view::npos;
}

inline bool is_required_phase(std::string_view name) {
  return std::find(kRequiredPhases.begin(), kRequiredPhases.end(), name) != kRequiredPhases.end();
}

// "proof, proof/queue, ...": for error messages that list what is accepted.
inline std::string required_phases_list() {
  std::string s;
  for (auto p : kRequiredPhases) (s += s.empty() ? "" : ", ") += p;
  return s;
}

}  // namespace cuzk
