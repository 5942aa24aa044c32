//===- Passes.td - kc-level passes -*- tablegen -*-===//
//
// Every pass has a kc- prefix. No `constructor`: tablegen generates
// createXPass() and its options struct.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_PASSES_TD
#define KCC_PASSES_TD

include "mlir/Pass/PassBase.td"

#endif // KCC_PASSES_TD
