func.func @unknown_on_function() attributes {kc.foo = 1 : i64} {
  return
}
