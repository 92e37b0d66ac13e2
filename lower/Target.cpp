// Names of the math functions a Target provides.
#include "lower/Target.h"

namespace tk::lower {

const char *mathFnName(MathFn f) {
  switch (f) {
    case MathFn::Exp: return "exp";
    case MathFn::Exp2: return "exp2";
    case MathFn::Log: return "log";
    case MathFn::Log2: return "log2";
    case MathFn::Sqrt: return "sqrt";
    case MathFn::Rsqrt: return "rsqrt";
    case MathFn::Sin: return "sin";
    case MathFn::Cos: return "cos";
    case MathFn::Tanh: return "tanh";
    case MathFn::Floor: return "floor";
    case MathFn::Ceil: return "ceil";
  }
  return "?";
}

}  // namespace tk::lower
