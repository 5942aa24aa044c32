//===- KcDialect.h - The kc dialect -----------------------------*- C++ -*-===//
//
// Include this to use the kc dialect: the dialect class, its enums and
// attributes, its op interfaces (the gradient rules) and every op.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_IR_KCDIALECT_H
#define KCC_IR_KCDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "ir/KcDialect.h.inc"
#include "ir/KcEnums.h.inc"
#include "ir/KcInterfaces.h.inc"

#define GET_ATTRDEF_CLASSES
#include "ir/KcAttrs.h.inc"

#define GET_OP_CLASSES
#include "ir/KcOps.h.inc"

#endif // KCC_IR_KCDIALECT_H
