// `--arg NAME=i64[N]:addresses(a,b,c)`: a buffer holding the device
// addresses of other buffers of the same launch, as Triton's grouped GEMM
// (tutorial 08) passes its per-group matrices. A `**T` parameter takes such a
// buffer; so does an `*i64` one the kernel casts back (`load(p) as *f16`).
#include "Addresses.h"

#include <cctype>
#include <cstring>
#include <map>

namespace tkc {

namespace {
[[noreturn]] void fail(const ArgSpec &a, const std::string &why) { throw tk::Error("--arg " + a.text + ": " + why); }

bool isName(const std::string &s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}
}  // namespace

bool parseAddresses(ArgSpec &a, const std::string &init) {
  const std::string head = "addresses(";
  if (init.compare(0, head.size(), head) != 0) return false;
  const std::string form = "expected addresses(BUF, BUF, ...) naming buffer args of this run";
  if (init.back() != ')') fail(a, "unterminated 'addresses(': " + form);
  std::string list = init.substr(head.size(), init.size() - head.size() - 1);
  size_t from = 0;
  while (true) {
    size_t comma = list.find(',', from);
    std::string name = list.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
    name.erase(0, name.find_first_not_of(' '));
    name.erase(name.find_last_not_of(' ') + 1);
    if (!isName(name)) fail(a, "'" + name + "' in addresses(...) is not a buffer name: " + form);
    a.addressesOf.push_back(name);
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  if (a.dtype != "i64") fail(a, "addresses(...) fills an i64 buffer (64-bit addresses), not " + a.dtype);
  if (a.addressesOf.size() != a.count)
    fail(a, "i64[" + std::to_string(a.count) + "] but addresses(...) names " + std::to_string(a.addressesOf.size()) +
                " buffer" + (a.addressesOf.size() == 1 ? "" : "s"));
  a.fill = Fill::Addresses;
  return true;
}

bool addressed(const LaunchSpec &spec, const std::string &name) {
  for (const ArgSpec &a : spec.args)
    for (const std::string &n : a.addressesOf)
      if (n == name) return true;
  return false;
}

void checkAddresses(const LaunchSpec &spec) {
  for (const ArgSpec &a : spec.args)
    for (const std::string &name : a.addressesOf) {
      const ArgSpec *b = spec.find(name);
      if (!b) fail(a, "addresses(...) names '" + name + "', which is not an --arg of this run");
      if (!b->isBuffer) fail(a, "addresses(...) names '" + name + "', a scalar; it takes buffer args");
    }
}

void bindAddressed(tk::Device &dev, const LaunchSpec &spec, const std::vector<tk::KernelParam> &params,
                   LaunchSpec::Bound &b) {
  for (const ArgSpec &a : spec.args) {
    bool isParam = false;
    for (const tk::KernelParam &p : params) isParam = isParam || p.name == a.name;
    if (isParam || !a.isBuffer) continue;
    BoundBuffer bb{a, {}, spec.initialBytes(a)};
    bb.buffer = dev.alloc(bb.initial.size());
    dev.copyToDevice(bb.buffer, bb.initial.data(), bb.initial.size());
    b.buffers.push_back(std::move(bb));
  }
  std::map<std::string, uint64_t> where;
  for (const BoundBuffer &bb : b.buffers) where[bb.spec.name] = bb.buffer.address();
  for (BoundBuffer &bb : b.buffers) {
    if (bb.spec.fill != Fill::Addresses) continue;
    bb.initial.resize(bb.spec.addressesOf.size() * sizeof(uint64_t));
    for (size_t i = 0; i < bb.spec.addressesOf.size(); ++i) {
      const uint64_t addr = where.at(bb.spec.addressesOf[i]);  // checkAddresses made sure it is there
      std::memcpy(bb.initial.data() + i * sizeof addr, &addr, sizeof addr);
    }
    dev.copyToDevice(bb.buffer, bb.initial.data(), bb.initial.size());
  }
}

}  // namespace tkc
