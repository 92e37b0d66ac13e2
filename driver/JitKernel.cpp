// tk::JitKernel: compile on first launch, one variant per set of integer
// facts the launches' values give (include/tk/jit.h).
#include "tk/jit.h"

#include <optional>
#include <type_traits>
#include <variant>

namespace tk {

namespace {
bool isIntegerType(const std::string &t) { return t == "i8" || t == "i16" || t == "i32" || t == "i64"; }
}  // namespace

std::map<std::string, int64_t> launchSpecialisation(const std::vector<KernelParam> &params,
                                                    const std::vector<Arg> &args) {
  std::map<std::string, int64_t> out;
  size_t i = 0;
  for (const KernelParam &p : params) {
    if (p.isConst) continue;
    if (i >= args.size()) break;
    const Arg &a = args[i++];
    // @multiple_of is compiled into every variant; @no_specialize into none.
    if (!isIntegerType(p.type) || p.noSpecialize || p.multipleOf) continue;
    std::optional<int64_t> v = std::visit(
        [](const auto &x) -> std::optional<int64_t> {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) return int64_t(x);
          else return std::nullopt;
        },
        a);
    if (v && !integerFact(*v).empty()) out[p.name] = *v;
  }
  return out;
}

struct JitKernel::Impl {
  Device *device;
  std::string path, kernel;
  CompileOptions opts;
  std::vector<KernelParam> params;
  std::map<std::string, Kernel> variants;  // facts text ("n=16;stride=1;") -> loaded variant
};

JitKernel::JitKernel(Device &device, std::string path, std::string kernel, CompileOptions opts)
    : impl_(std::make_unique<Impl>()) {
  if (!opts.assume.empty())
    throw Error("JitKernel '" + kernel + "': CompileOptions::assume must be empty (each launch's values decide it)");
  impl_->device = &device;
  impl_->path = std::move(path);
  impl_->kernel = std::move(kernel);
  impl_->opts = std::move(opts);
  bool found = false;
  for (auto &[name, params] : Compiler::kernels(impl_->path))
    if (name == impl_->kernel) {
      impl_->params = std::move(params);
      found = true;
    }
  if (!found) throw Error("no kernel named '" + impl_->kernel + "' in " + impl_->path);
}

JitKernel::~JitKernel() = default;
JitKernel::JitKernel(JitKernel &&) noexcept = default;
JitKernel &JitKernel::operator=(JitKernel &&) noexcept = default;

std::map<std::string, int64_t> JitKernel::specialisation(const std::vector<Arg> &args) const {
  return launchSpecialisation(impl_->params, args);
}

const Kernel &JitKernel::variant(const std::vector<Arg> &args) {
  std::map<std::string, int64_t> assume = specialisation(args);
  std::string key;
  for (const auto &[name, value] : assume) key += name + "=" + integerFact(value) + ";";
  auto it = impl_->variants.find(key);
  if (it != impl_->variants.end()) return it->second;
  CompileOptions co = impl_->opts;
  co.assume = std::move(assume);
  Kernel k = impl_->device->load(Compiler::compileFile(impl_->path, impl_->kernel, co));
  return impl_->variants.emplace(key, std::move(k)).first->second;
}

LaunchStats JitKernel::launch(Dim3 grid, const std::vector<Arg> &args, const LaunchOptions &opts) {
  return impl_->device->launch(variant(args), grid, args, opts);
}

size_t JitKernel::variantCount() const { return impl_->variants.size(); }

}  // namespace tk
