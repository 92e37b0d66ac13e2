// The instrumented operations of a sim program: each marked memory access
// (each located barrier or shuffle, and every ldmatrix and mma) gets a site
// id the runtime uses to name the source line in errors and to group lanes
// into warp-level requests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tk::sim {

enum class SiteKind : uint8_t {
  GlobalLoad,
  GlobalStore,
  GlobalAtomic,
  SharedLoad,
  SharedStore,
  SharedAtomic,
  Barrier,  // a located block barrier or named barrier (bar.sync id, threads)
  Shuffle,
  Ldmatrix,  // a warp's shared-memory read of 8 x 16 bytes per matrix, checked and counted by the runtime
  Mma,
  Wgmma,  // a warpgroup's shared-memory read of its operands, 16 bytes per core-matrix row
  Mbarrier,  // an mbarrier operation that carries !tk.loc (init, inval, arrive[.expect_tx], try_wait.parity)
  IndexOverflow  // sim:overflow: an i32 add/sub/mul/shl or i64 -> i32 truncation whose result reaches an address
};

// Where the pointer a global access's address derives from comes from, when
// it is not a kernel parameter (PointerProvenance.h); TensorMap: a bulk
// tensor copy's rows, from the base its tensor map holds.
enum class SiteRoot : uint8_t { None, Integer, Loaded, TensorMap };

// The integer operations the overflow check watches (InstrumentOverflow.h).
enum class IndexOp : uint8_t { Add, Sub, Mul, Shl, Trunc };

struct Site {
  SiteKind kind;
  uint32_t bytes = 0;  // access width (store size of the accessed type; an ldmatrix row's 16); 0 for the others
  std::string loc;     // "file:line:col" from !tk.loc, or empty
  // Masked vector accesses (llvm.masked.load/store): lanes of `elemBytes` each.
  uint32_t elemBytes = 0;
  bool masked = false;
  // Global accesses: the parameter of `kernel` the address derives from
  // (pointerParam), and its name, or -1 when it could not be traced. The
  // runtime then checks the access against that argument's buffer.
  int32_t param = -1;
  std::string paramName = {};  // the LLVM argument's name (the .tk parameter's), or empty
  std::string kernel = {};     // the function holding the access
  // Global accesses whose address derives from one pointer made from an
  // integer or loaded from memory (not a parameter): the hook is also given
  // that pointer, the root, and the access must stay in the allocation that
  // holds the root (docs/sim.md, "Provenance").
  SiteRoot root = SiteRoot::None;
  // IndexOverflow sites: the operation, and which access its result reaches
  // ("load at f.tk:7:13"), for the error.
  IndexOp indexOp = IndexOp::Add;
  std::string reaches = {};

  bool isShared() const {
    return kind == SiteKind::SharedLoad || kind == SiteKind::SharedStore || kind == SiteKind::SharedAtomic;
  }
  bool isStore() const { return kind == SiteKind::GlobalStore || kind == SiteKind::SharedStore; }
  bool isAtomic() const { return kind == SiteKind::GlobalAtomic || kind == SiteKind::SharedAtomic; }
  const char *verb() const { return isAtomic() ? "atomic" : isStore() ? "store" : "load"; }
};

struct SiteTable {
  std::vector<Site> sites;
  uint32_t add(Site s) {
    sites.push_back(std::move(s));
    return uint32_t(sites.size() - 1);
  }
  uint32_t maxBytes() const {
    uint32_t m = 0;
    for (const Site &s : sites) m = s.bytes > m ? s.bytes : m;
    return m;
  }
};

}  // namespace tk::sim
