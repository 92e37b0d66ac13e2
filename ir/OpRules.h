// The tile IR verifier's per-op rules (ir/Verifier.cpp runs them on every
// op, after the structure): operand and result types and the attributes each
// op needs. Private to ir/.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>

#include "ir/IR.h"

namespace tk::ir {

class OpRules {
 public:
  // `report(op, message)` records one problem; checking goes on after it.
  explicit OpRules(std::function<void(const Op &, const std::string &)> report) : report_(std::move(report)) {}
  void check(const Op &op);

 private:
  void tileOp(const Op &op);
  void selectionOp(const Op &op);
  void valueOp(const Op &op);
  void memoryOp(const Op &op);
  void tmaOp(const Op &op);  // TmaRules.cpp
  void opError(const Op &op, const std::string &msg) { report_(op, msg); }
  void checkAxis(const Op &op, const char *name, int64_t lo, int64_t hi);
  void checkSameAsResult(const Op &op, bool (*ok)(const Type &), const char *what);
  static std::string vectorAttrProblem(const Op &op);

  std::function<void(const Op &, const std::string &)> report_;
  std::map<int64_t, std::pair<Type, int64_t>> rings_;  // shared ring -> (slot type, stages)
};

}  // namespace tk::ir
