func.func @fusion_on_other_op() {
  %c0 = arith.constant {kc.fusion = {kind = "rows", layers = [], local_bytes = 0 : i64, ops = 1 : i64}} 0 : index
  return
}
