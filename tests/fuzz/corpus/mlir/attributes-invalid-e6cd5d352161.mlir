func.func @name_on_function() attributes {kc.name = "f"} {
  return
}
