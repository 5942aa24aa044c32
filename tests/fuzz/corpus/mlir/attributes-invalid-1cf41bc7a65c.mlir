func.func @fusion_on_function() attributes {kc.fusion = {kind = "rows", layers = [], local_bytes = 0 : i64, ops = 1 : i64}} {
  return
}
