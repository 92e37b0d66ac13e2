// Renders Ops.def as the Markdown op reference of docs/ir.md, with each op's
// text form and the attributes the verifier requires.
#include "ir/OpDocs.h"

#include "ir/IR.h"
#include "ir/OpAttrs.h"

namespace tk::ir {

// The operands and attributes each op takes in the text form; the verifier
// (Verifier.cpp) enforces the same conventions.
static const char *syntaxOf(OpKind k) {
  switch (k) {
    case OpKind::Constant: return "`%r = constant {value = 1.5} : tile<128xf32>`";
    case OpKind::ProgramId: return "`%r = program_id {axis = 0} : i32`";
    case OpKind::NumPrograms: return "`%r = num_programs {axis = 0} : i32`";
    case OpKind::Arange: return "`%r = arange {end = 128, start = 0} : tile<128xi32>`";
    case OpKind::Splat: return "`%r = splat %s : tile<128xf32>`";
    case OpKind::Broadcast: return "`%r = broadcast %t : tile<64x128xf32>` (from `tile<1x128xf32>`)";
    case OpKind::ExpandDims: return "`%r = expand_dims %t {axis = 1} : tile<64x1xf32>`";
    case OpKind::Trans:
      return "`%r = trans %t : tile<32x64xf16>` (2-D), `%r = trans %t {order = [2, 0, 1]} : tile<64x4x8xf32>` (from "
             "`tile<4x8x64xf32>`)";
    case OpKind::Reshape: return "`%r = reshape %t : tile<4x64xf32>` (from `tile<256xf32>`)";
    case OpKind::ConvertLayout: return "`%r = convert_layout %t : tile<128xf32, #blocked<...>>`";
    case OpKind::Reduce:
      return "`%r = reduce %t {axis = 1, kind = \"sum\"} : tile<64xf32>` (from `tile<64x128xf32>`; sum max min argmax "
             "argmin xor_sum)";
    case OpKind::Dot:
      return "`%r = dot %a, %b, %acc : tile<64x32xf32>` (`%a`: `tile<64x16xf16>`, `%b`: `tile<16x32xf16>`)";
    case OpKind::Print: return "`print %x, %t {prefix = \"x =\"}` (any number of scalars and tiles)";
    case OpKind::Assert: return "`assert %cond {message = \"x must be positive\"}` (i1 or a tile of i1)";
    case OpKind::Barrier: return "`barrier`";
    case OpKind::Scan:
      return "`%r = scan %t {axis = 1, kind = \"sum\"} : tile<64x128xf32>` (the operand's shape; sum prod)";
    case OpKind::Gather:
      return "`%r = gather %src, %idx {axis = 1} : tile<64x16xf32>` (`%src`: `tile<64x128xf32>`, `%idx`: `tile<64x16xi32>`)";
    case OpKind::Histogram: return "`%r = histogram %x, %mask {bins = 64} : tile<64xi32>` (`%x`: `tile<1024xi32>`)";
    case OpKind::Sort:
      return "`%k, %i = sort %keys, %idx {axis = 1, descending = 1} : tile<4x128xf32>, tile<4x128xi32>` (the operands' types)";
    case OpKind::ReduceCombine:
      return "`%m, %i = reduce_combine %v, %idx ({ ^(%lv: f32, %li: i32, %rv: f32, %ri: i32): ... yield %cv, %ci }) "
             "{axis = 1} : tile<64xf32>, tile<64xi32>` (from `tile<64x128xf32>`, `tile<64x128xi32>`)";
    case OpKind::ScanCombine:
      return "`%a2, %b2 = scan_combine %a, %b ({ ^(%la: f32, %lb: f32, %ra: f32, %rb: f32): ... yield %ca, %cb }) "
             "{axis = 0, reverse = 0} : tile<128xf32>, tile<128xf32>` (the operands' types)";
    case OpKind::Cmp: return "`%r = cmp %a, %b {predicate = \"lt\"} : tile<128xi1>` (eq ne lt le gt ge)";
    case OpKind::IsNan: return "`%r = isnan %x : tile<128xi1>` (`%x`: `tile<128xf32>`)";
    case OpKind::IsInf: return "`%r = isinf %x : tile<128xi1>` (`%x`: `tile<128xf32>`)";
    case OpKind::Signbit: return "`%r = signbit %x : tile<128xi1>` (`%x`: `tile<128xf32>`)";
    case OpKind::Select: return "`%r = select %cond, %a, %b : tile<128xf32>`";
    case OpKind::AxisHint:
      return "`%r = axis_hint %offs {max_contiguous = [128], multiple_of = [128]} : tile<128xi32>` (also "
             "`max_constancy`; integers or pointers)";
    case OpKind::Cast: return "`%r = cast %x : tile<128xf16>`";
    case OpKind::AddPtr: return "`%r = addptr %p, %offs : tile<128xptr<f32>>`";
    case OpKind::IntToPtr: return "`%r = int_to_ptr %addr : ptr<f16>` (`%addr`: i64; a tile of i64 gives a tile of pointers)";
    case OpKind::PtrToInt: return "`%r = ptr_to_int %p : i64` (`%p`: any pointer)";
    case OpKind::Bitcast: return "`%r = bitcast %x : tile<128xi32>` (`%x`: `tile<128xf32>`)";
    case OpKind::Load: return "`%r = load %p, %mask, %other : tile<128xf32>`";
    case OpKind::Store: return "`store %p, %value, %mask`";
    case OpKind::AtomicRmw:
      return "`%r = atomic_rmw %p, %v, %mask {kind = \"add\", scope = \"gpu\", sem = \"acq_rel\"} : tile<128xi32>` (add "
             "max min xchg and or xor; sem relaxed acquire release acq_rel; scope cta gpu sys)";
    case OpKind::AtomicCas:
      return "`%r = atomic_cas %p, %expected, %v {scope = \"gpu\", sem = \"acq_rel\"} : tile<128xi32>`";
    case OpKind::Return: return "`return`";
    case OpKind::AsyncCopy:
      return "`async_copy %p, %slot, %mask {buffer = 0, stages = 3}` (`%p`: `tile<64x32xptr<f16>>`, `%slot`: i32)";
    case OpKind::AsyncCommit: return "`async_commit`";
    case OpKind::AsyncWait: return "`async_wait {pending = 1}`";
    case OpKind::SharedLoad: return "`%r = shared_load %slot {buffer = 0, stages = 3} : tile<64x32xf16>`";
    case OpKind::DescLoad:
      return "`%r = desc_load %a, %a.shape0, %a.shape1, %a.stride0, %one, %m0, %k0 : tile<128x64xf16>` (`%one`: i64 1)";
    case OpKind::TmaInit: return "`tma_init {barrier = 0, stages = 3}`";
    case OpKind::TmaExpect: return "`tma_expect %slot, %in_range {barrier = 0, bytes = 32768, stages = 3}`";
    case OpKind::TmaCopy:
      return "`tma_copy %a, %slot, %in_range, %m0, %k0 {barrier = 0, block = [128, 64], box = [8, 64], buffer = 0, "
             "operand = 1, stages = 3, swizzle = 128}`";
    case OpKind::TmaWait: return "`tma_wait %slot, %phase {barrier = 0, stages = 3}`";
    case OpKind::TmaRelease: return "`tma_release {barrier = 0, stages = 3}`";
    case OpKind::TmaAcquire: return "`tma_acquire %slot, %phase {barrier = 0, stages = 3}`";
    case OpKind::TmaConsumed: return "`tma_consumed %previous_slot {barrier = 0, stages = 3}`";
    case OpKind::DescStore:
      return "`desc_store %c, %c.shape0, %c.shape1, %c.stride0, %one, %m0, %n0, %acc` (`%acc`: `tile<128x128xf32>`)";
    case OpKind::TmaStore: return "`tma_store %c, %m0, %n0, %acc {box = [128, 32], swizzle = 128}`";
    case OpKind::WarpSpecialize:
      return "`warp_specialize ({ ...producer... yield }, { ...consumers... yield }) {producer_warps = 4}`";
    default: break;
  }
  return nullptr;
}

static std::string operandCount(const OpInfo &info) {
  if (info.maxOperands < 0) return std::to_string(info.minOperands) + "+";
  if (info.minOperands == info.maxOperands) return std::to_string(info.minOperands);
  return std::to_string(info.minOperands) + "–" + std::to_string(info.maxOperands);
}

static std::string traits(unsigned t) {
  std::string s;
  auto add = [&](unsigned bit, const char *name) {
    if (t & bit) s += (s.empty() ? "" : ", ") + std::string(name);
  };
  add(OpTrait::Pure, "pure");
  add(OpTrait::Elementwise, "elementwise");
  add(OpTrait::Math, "math");
  add(OpTrait::Terminator, "terminator");
  return s.empty() ? "—" : s;
}

// Markdown table cells cannot hold a bare '|'.
static std::string cell(const std::string &s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

std::string opReferenceMarkdown() {
  std::string md =
      "| op | operands | result | traits | description | form |\n"
      "| --- | --- | --- | --- | --- | --- |\n";
  for (const OpInfo &info : allOps()) {
    std::string form;
    if (const char *s = syntaxOf(info.kind)) {
      form = s;
    } else {
      // Elementwise ops all read the same: operands and result of one type.
      form = "`%r = " + std::string(info.mnemonic);
      for (int i = 0; i < info.minOperands; ++i) form += (i ? ", %" : " %") + std::string(1, static_cast<char>('a' + i));
      bool intOnly = info.kind == OpKind::And || info.kind == OpKind::Or || info.kind == OpKind::Xor ||
                     info.kind == OpKind::Shl || info.kind == OpKind::Shr || info.kind == OpKind::Not ||
                     info.kind == OpKind::UMulHi;
      form += intOnly ? " : tile<128xi32>`" : " : tile<128xf32>`";
    }
    md += "| `" + std::string(info.mnemonic) + "` | " + operandCount(info) + " | " + (info.numResults < 0 ? "any" : info.numResults ? "yes" : "—") +
          " | " + traits(info.traits) + " | " + cell(info.doc) + " | " + cell(form) + " |\n";
  }
  // The attributes, as Ops.def declares them (the verifier checks presence
  // and kind from the same lines).
  md += "\n### Attributes\n\n"
        "Each op's attributes, as `ir/Ops.def` declares them: the verifier checks that a required one is there and "
        "that each has its kind; an attribute nothing declares is carried and ignored.\n\n"
        "| op | attribute | value | required | meaning |\n"
        "| --- | --- | --- | --- | --- |\n";
  for (const OpInfo &info : allOps())
    for (const AttrDecl &d : declaredAttrs(info.kind))
      md += "| `" + std::string(info.mnemonic) + "` | `" + d.name + "` | " + cell(attrKindText(d)) + " | " +
            (d.required ? "yes" : "no") + " | " + cell(d.doc) + " |\n";
  md += "\nA kernel's own attributes (`kernel @k(...) {num_warps = 4, ...}`), each optional, beside `const.NAME` for "
        "each const parameter:\n\n"
        "| attribute | value | meaning |\n"
        "| --- | --- | --- |\n";
  for (const AttrDecl &d : declaredKernelAttrs())
    md += "| `" + std::string(d.name) + "` | " + cell(attrKindText(d)) + " | " + cell(d.doc) + " |\n";
  return md;
}

}  // namespace tk::ir
