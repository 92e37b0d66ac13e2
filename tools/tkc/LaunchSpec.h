// The one description of a launch that `tkc run`, `tkc tune` and `tkc report`
// share: `--arg NAME=SPEC` for every non-const parameter, `--grid` as tk
// expressions over the scalar args and the consts, `--seed` for the random
// fills. Parsed once, checked against a kernel's parameters, bound to a device.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lang/HostExpr.h"
#include "runtime/Descriptors.h"
#include "runtime/OutputFiles.h"
#include "tk/runtime.h"

namespace tkc {

// How a buffer is filled before the launch.
enum class Fill {
  Rand,   // uniform in [-1, 1) (floats); integers in [-100, 100); bools 0/1
  Randn,  // standard normal (float dtypes only)
  Zeros,
  Ones,
  Arange,  // 0, 1, 2, ... converted to the dtype (not for bool)
  File,    // the elements of a .npy file (see readNpyAs)
  Addresses,  // addresses(a, b, ...): the device addresses of other buffer args (Addresses.h)
};

// One `--arg NAME=SPEC`: a scalar literal or a buffer `DTYPE[COUNT]:INIT[>OUT]`
// (COUNT may be a shape, `D0xD1..`: a descriptor parameter takes the buffer
// as a row-major tensor of that shape).
struct ArgSpec {
  std::string name;
  std::string text;  // the whole `NAME=SPEC`, for messages
  bool isBuffer = false;
  tk::lang::HostValue scalar = tk::lang::HostValue::ofInt(0);  // scalars
  std::string dtype;                                           // buffers: a tk scalar type
  uint64_t count = 0;                                          // buffers: elements, >= 1
  std::vector<uint64_t> dims;  // buffers given a shape, DTYPE[D0xD1..]: its sizes (count is their product)
  // The tensor a descriptor parameter sees: dims, or [count].
  std::vector<int64_t> shape() const {
    return dims.empty() ? std::vector<int64_t>{int64_t(count)} : std::vector<int64_t>(dims.begin(), dims.end());
  }
  Fill fill = Fill::Zeros;
  std::string inFile;   // Fill::File
  std::string outFile;  // written after the run as a 1-D .npy; "" for none
  std::vector<std::string> addressesOf;  // Fill::Addresses: the buffer args whose addresses it holds
};

// A buffer as bound on a device.
struct BoundBuffer {
  ArgSpec spec;
  tk::Buffer buffer;
  std::vector<char> initial;  // the bytes it was filled with (for reset)
};

// A parameter a literal is passed for: not a buffer, not a descriptor.
inline bool isScalarParam(const tk::KernelParam &p) { return p.type[0] != '*' && !tk::detail::isDescriptorType(p.type); }

struct LaunchSpec {
  static constexpr uint64_t kDefaultSeed = 0;

  // Parses the `--arg` texts and the `--grid` text (1 to 3 tk expressions
  // separated by top-level commas). Throws tk::Error on a malformed SPEC, an
  // unknown dtype or INIT, a duplicate NAME, two buffers writing one file, or
  // a grid that does not parse. Reads no file yet.
  static LaunchSpec parse(const std::vector<std::string> &args, const std::string &grid, uint64_t seed = kDefaultSeed);

  // Checks the args against a kernel's parameters (consts included, as
  // tk::Compiler::kernels gives them, or a Bundle's): every non-const
  // parameter gets exactly one arg, pointers a buffer of the pointee dtype,
  // scalars a literal of a fitting type (ints: an int literal in range;
  // floats: an int or float literal; bool: true/false), and the grid names
  // only scalar args and consts and gives an integer (HostExpr::check, so
  // before any compile). Throws tk::Error listing what is expected.
  void check(const std::string &kernel, const std::vector<tk::KernelParam> &params) const;

  // The integer facts a launch with these scalars is compiled for
  // (tk::launchSpecialisation: values of 1 or multiples of 16, parameters
  // declared @no_specialize or @multiple_of left out), as CompileOptions::
  // assume takes them. `params` as for check().
  std::map<std::string, int64_t> specialisation(const std::vector<tk::KernelParam> &params) const;

  // Allocates and fills every buffer on `dev` (reading the @files now) and
  // builds the launch arguments in the order of `params` (its non-const
  // ones: a Bundle's params or launchParams()). Call check() first.
  struct Bound {
    std::vector<tk::Arg> args;
    std::map<std::string, tk::lang::HostValue> scalars;  // by name, converted to the parameter's type
    std::vector<BoundBuffer> buffers;                    // in parameter order
  };
  Bound bind(tk::Device &dev, const std::vector<tk::KernelParam> &params) const;
  // Fills every buffer of `b` again with its initial contents (between the
  // runs of a tuner, for kernels that update a buffer in place).
  void reset(tk::Device &dev, const Bound &b) const;

  // The grid of a compiled variant: the --grid expressions evaluated over the
  // scalar args and the const values (`consts`: name -> value as text, as
  // KernelParam::value holds them). Throws tk::Error naming the expression
  // when one fails, is not an integer, or is out of range (x in [1, 2^31-1],
  // y and z in [1, 65535]).
  tk::Dim3 gridForConsts(const std::map<std::string, std::string> &consts) const;
  // The launching device's multiprocessors, what `num_sms()` gives a grid
  // (set once the device is open; 0: unknown, and num_sms() an error).
  int numSms = 0;
  tk::Dim3 grid(const tk::Bundle &bundle) const;  // its const params' values

  // Downloads the buffers that have an `>out.npy` and adds them to `out`,
  // which the command commits with its other outputs (all or none).
  void addOutputs(tk::Device &dev, const Bound &b, tk::files::OutputSet &out) const;

  // The host bytes a buffer arg starts with: generated from `seed` and the
  // arg's name (so the order of --arg does not matter), or read from its
  // .npy file.
  std::vector<char> initialBytes(const ArgSpec &a) const;

  std::vector<ArgSpec> args;                                         // in command-line order
  std::vector<std::string> gridTexts;                                // 1 to 3
  std::vector<std::shared_ptr<const tk::lang::HostExpr>> gridExprs;  // parsed gridTexts
  uint64_t seed = kDefaultSeed;
  // The scalar args by name, as written (before binding: the tuner's key).
  std::map<std::string, tk::lang::HostValue> scalars;

  const ArgSpec *find(const std::string &name) const;
};

// The parameters of kernel `kernel` of `file` (consts included). Throws
// tk::Error naming the kernels the file has when there is no such kernel.
std::vector<tk::KernelParam> kernelParams(const tk::SourceFile &file, const std::string &kernel);

// The launch `tkc run`, `tkc tune` and `tkc report` are given, checked
// against the kernel before any compile or device: --arg/--grid parsed, -D
// parsed and naming consts, every parameter given an argument of its type.
// `importOpts`: where imports are found. Throws tk::Error saying what is wrong.
// The file is read once, here: the command compiles from `source`.
struct CheckedLaunch {
  LaunchSpec spec;
  std::map<std::string, std::string> defines;
  tk::SourceFile source;
  std::vector<tk::KernelParam> params;  // consts included
};
CheckedLaunch checkLaunch(const std::string &file, const std::string &kernel, const std::vector<std::string> &args,
                          const std::string &grid, uint64_t seed,
                          const std::vector<std::string> &defineTexts, const tk::CompileOptions &importOpts);
std::string assumedText(const tk::Bundle &bundle);

// A compiled variant's const values as JSON (run and report write them):
// numbers and bools as such, anything else (a dtype const) as its text.
nlohmann::ordered_json constsJson(const tk::Bundle &bundle);

// `-D NAME=VALUE` texts -> {NAME: VALUE}. Throws tk::Error on a malformed one.
std::map<std::string, std::string> parseDefines(const std::vector<std::string> &defines);
// `--assume NAME=VALUE` arguments: integer values by name (tk::Error naming a
// malformed one), as CompileOptions::assume takes them.
std::map<std::string, int64_t> parseAssumes(const std::vector<std::string> &assumes);
// Every -D must name a const parameter of the kernel. Throws tk::Error
// listing the consts otherwise.
// `--emit cpp`, which compiles several kernels with one set of -D
// (NAME=VALUE): each name must be a const parameter of one of `kernels`.
void checkDefineNames(const std::vector<std::pair<std::string, std::vector<tk::KernelParam>>> &kernels,
                      const std::vector<std::string> &defines);
void checkDefines(const std::string &kernel, const std::vector<tk::KernelParam> &params,
                  const std::map<std::string, std::string> &defines);
// "k(x: *f32, n: i32, const BLOCK: i32 = 1024)", for messages.
std::string signature(const std::string &kernel, const std::vector<tk::KernelParam> &params);

}  // namespace tkc
