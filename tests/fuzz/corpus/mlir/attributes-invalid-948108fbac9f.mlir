func.func @arena_bytes_not_integer() attributes {kc.arena_bytes = "64"} {
  return
}
