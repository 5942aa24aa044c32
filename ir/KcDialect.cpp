//===- KcDialect.cpp - kc dialect registration ----------------------------===//

#include "ir/KcDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace kcc::kc;

#include "ir/KcDialect.cpp.inc"
#include "ir/KcEnums.cpp.inc"
#include "ir/KcInterfaces.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "ir/KcAttrs.cpp.inc"

void KcDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "ir/KcAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "ir/KcOps.cpp.inc"
      >();
}
