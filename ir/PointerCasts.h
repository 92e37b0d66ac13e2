// The rules of the tile IR's reinterpreting casts (int_to_ptr, ptr_to_int,
// bitcast), stated once for the verifier, the front end's diagnostics and
// canonicalize: they move bits, never convert values, so each is legal only
// between types whose bits mean something in the other.
#pragma once

#include <string>

#include "ir/IR.h"

namespace tk::ir {

// Whether `bitcast` may read a `from` number's bits as a `to` number: equal
// widths of 8 bits or more, bool excluded (i1 has no memory width of its own).
bool bitcastable(ScalarKind from, ScalarKind to);

// What is wrong with an int_to_ptr, ptr_to_int or bitcast `op` (its operand
// and result types), or "" when nothing is.
std::string checkPointerCast(const Op &op);

}  // namespace tk::ir
