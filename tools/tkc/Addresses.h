// Buffers of buffer addresses for `tkc run`/`tune`/`report`:
// `--arg ptrs=i64[3]:addresses(a,b,c)` (docs/tkc.md, "--arg NAME=SPEC").
#pragma once

#include <string>

#include "LaunchSpec.h"

namespace tkc {

// Whether `init` is `addresses(...)`; if so fills a.addressesOf and a.fill,
// checking the dtype (i64) and that COUNT is the number of names. Throws
// tk::Error naming the arg on a malformed list.
bool parseAddresses(ArgSpec &a, const std::string &init);
// Whether some addresses(...) of `spec` names `name`: such a buffer needs no
// kernel parameter of its own (the kernel reaches it through the address).
bool addressed(const LaunchSpec &spec, const std::string &name);
// Every name an addresses(...) lists is a buffer arg of `spec`.
void checkAddresses(const LaunchSpec &spec);
// Allocates the buffers that are no parameter (appended to b.buffers, not
// to b.args), then writes each addresses(...) buffer of `b` with the
// addresses of the buffers it names, kept as its initial bytes for reset.
void bindAddressed(tk::Device &dev, const LaunchSpec &spec, const std::vector<tk::KernelParam> &params,
                   LaunchSpec::Bound &b);

}  // namespace tkc
