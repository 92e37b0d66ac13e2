// Op attributes declared once (ir/Ops.def, ir/Enums.def): the enums read back
// what they write, every declaration is well formed, and the verifier holds
// an op to its declarations and to nothing else.
#include <gtest/gtest.h>

#include <set>

#include "ir/OpAttrs.h"
#include "ir/Parser.h"
#include "ir/Verifier.h"

namespace tk::ir {
namespace {

template <class E>
void expectRoundTrip() {
  std::set<std::string> seen;
  for (size_t i = 0; i < enumNames<E>().size(); ++i) {
    const E v = static_cast<E>(i);
    const std::string name = enumName(v);
    EXPECT_TRUE(seen.insert(name).second) << "spelled twice: " << name;
    EXPECT_EQ(parseEnum<E>(name), v) << name;
    EXPECT_EQ(attrOf(v), Attr(name));
  }
  EXPECT_FALSE(parseEnum<E>("")) << EnumInfo<E>::what;
  EXPECT_FALSE(parseEnum<E>("nonsense")) << EnumInfo<E>::what;
}

TEST(IrAttrs, EnumsReadBackWhatTheyWrite) {
  expectRoundTrip<CmpPredicate>();
  expectRoundTrip<ReduceKind>();
  expectRoundTrip<ScanKind>();
  expectRoundTrip<AtomicKind>();
  expectRoundTrip<AtomicSem>();
  expectRoundTrip<AtomicScope>();
  expectRoundTrip<LoadCache>();
  expectRoundTrip<StoreCache>();
  expectRoundTrip<Eviction>();
  expectRoundTrip<InputPrecision>();
  EXPECT_EQ(enumChoices<ScanKind>(), "\"sum\" or \"prod\"");
  EXPECT_EQ(enumChoices<AtomicScope>(), "\"cta\", \"gpu\" or \"sys\"");
}

TEST(IrAttrs, DeclarationsAreWellFormed) {
  size_t total = 0;
  for (const OpInfo &info : allOps()) {
    std::set<std::string> names;
    for (const AttrDecl &d : declaredAttrs(info.kind)) {
      EXPECT_EQ(d.op, info.kind);
      EXPECT_TRUE(names.insert(d.name).second) << info.mnemonic << " declares '" << d.name << "' twice";
      EXPECT_NE(std::string(d.doc), "") << info.mnemonic << "." << d.name;
      EXPECT_EQ(d.kind == AttrKind::Enum, !d.choices.empty()) << info.mnemonic << "." << d.name;
      ++total;
    }
  }
  EXPECT_GE(total, 50u);  // 57 when written
}

// What the verifier says of `attrs` on a `cmp` of two i32s and on a scan.
std::string verify(const std::string &cmpAttrs, const std::string &scanAttrs = "{axis = 0, kind = \"sum\"}") {
  std::string error;
  auto m = parseModule("kernel @k(%a: i32) {\n  %0 = cmp %a, %a " + cmpAttrs +
                           " : i1\n  %1 = arange {end = 4, start = 0} : tile<4xi32>\n  %2 = scan %1 " + scanAttrs +
                           " : tile<4xi32>\n  return\n}\n",
                       "m.tir", error);
  EXPECT_TRUE(m) << error;
  if (!m) return "parse error";
  verifyModule(*m, error);
  return error;
}

TEST(IrAttrs, TheVerifierHoldsAnOpToItsDeclarations) {
  EXPECT_EQ(verify("{predicate = \"le\"}"), "");
  // An attribute nothing declares is carried and ignored.
  EXPECT_EQ(verify("{predicate = \"le\", note = \"kept\"}"), "");
  EXPECT_NE(verify("{}").find("'cmp' op: needs a 'predicate' attribute: \"eq\", \"ne\", \"lt\", \"le\", \"gt\" or \"ge\""),
            std::string::npos);
  EXPECT_NE(verify("{predicate = 1}").find("'predicate' must be \"eq\", \"ne\", \"lt\", \"le\", \"gt\" or \"ge\", not 1"),
            std::string::npos);
  EXPECT_NE(verify("{predicate = \"lt\"}", "{kind = \"sum\"}").find("'scan' op: needs an integer 'axis' attribute"),
            std::string::npos);
  EXPECT_NE(verify("{predicate = \"lt\"}", "{axis = 0.5, kind = \"sum\"}").find("'axis' must be an integer, not 0.5"),
            std::string::npos);
  EXPECT_NE(verify("{predicate = \"lt\"}", "{axis = 0, kind = \"sum\", reverse = 2}").find("'reverse' must be 0 or 1, not 2"),
            std::string::npos);
  EXPECT_EQ(verify("{predicate = \"lt\"}", "{axis = 0, kind = \"prod\", reverse = 1}"), "");
}

}  // namespace
}  // namespace tk::ir
