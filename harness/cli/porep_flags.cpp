#include "harness/cli/porep_flags.hpp"

#include "harness/cli/commands.hpp"

namespace cuzk::cli {

std::function<size_t()> add_porep_flags(CLI::App* sub, PorepFlags& f) {
  CLI::Option* opts[] = {
      sub->add_option("--challenges", f.challenges, "PoRep-shaped circuit: challenges per partition")->capture_default_str(),
      sub->add_option("--layers", f.layers, "PoRep-shaped circuit: SHA-256 labeling layers (0: none)")->capture_default_str(),
      sub->add_option("--parents", f.parents, "PoRep-shaped circuit: parent labels per label")->capture_default_str(),
      sub->add_option("--depth", f.depth, "PoRep-shaped circuit: binary tree depth")->capture_default_str()};
  return [=] {
    size_t n = 0;
    for (CLI::Option* o : opts) n += o->count();
    return n;
  };
}

circuits::PorepParams porep_params(const PorepFlags& f) {
  circuits::PorepParams p{checked_u32("--challenges", f.challenges, 1), checked_u32("--layers", f.layers),
                          checked_u32("--parents", f.parents), checked_u32("--depth", f.depth, 1)};
  if (std::string err = p.validate(); !err.empty()) throw Error(err);
  return p;
}

}  // namespace cuzk::cli
