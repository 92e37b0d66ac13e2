// The plan `tkc compile --emit cpp` makes of each kernel (EmitCpp.cpp) and
// the writer of its launchers (EmitLaunchers.cpp). Private to tkc.
#pragma once

#include <map>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "tk/compiler.h"

namespace tkc {

// One point a kernel is compiled at, before the integer specialisations.
struct Config {
  std::map<std::string, std::string> consts;  // -D values of this set
  int numWarps = 4, numStages = 3;
  std::map<std::string, std::string> key;  // tuning table: key argument -> value
};

// One compiled variant: a config and the facts assumed of integer arguments.
struct Variant {
  size_t config = 0;
  std::map<std::string, std::string> facts;  // "1" or "16"
  tk::Bundle bundle;
};

struct KernelPlan {
  std::string name;
  std::vector<tk::KernelParam> params;  // all, consts included, in order
  std::vector<Config> configs;
  std::vector<Variant> variants;  // by config, most specialised first
  std::set<std::string> written;  // pointer parameters the kernel stores through
};

// The C++ type a generated launcher takes for a parameter of tk type `t`
// (a tk::Error naming the kernel and parameter where there is none).
std::string cppType(const std::string &t, const std::string &kernel, const std::string &param);
bool isIntegerType(const std::string &t);

// Kernel `k`'s launchers: its config struct, select and typed launchers in
// the header `h`, their definitions and the dispatch over its variants
// (bundles firstBundle...) in `cpp`, the C launchers declared in `c`.
void writeKernel(const KernelPlan &k, const std::string &lib, size_t firstBundle, std::ostream &h, std::ostream &cpp,
                 std::ostream &c);

}  // namespace tkc
