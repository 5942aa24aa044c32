//===- KcOps.td - all kc ops -*- tablegen -*-===//
//
// The root of the kc ODS: the dialect and one file per op family.
//
//===----------------------------------------------------------------------===//

#ifndef KC_OPS_TD
#define KC_OPS_TD

include "ir/KcBase.td"
include "ir/KcElementwiseOps.td"
include "ir/KcShapeOps.td"
include "ir/KcNNOps.td"
include "ir/KcGatherOps.td"
include "ir/KcLossOps.td"
include "ir/KcImageOps.td"
include "ir/KcRecurrenceOps.td"

#endif // KC_OPS_TD
