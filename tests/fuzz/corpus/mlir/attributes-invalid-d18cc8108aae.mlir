func.func @in_place_odd() attributes {kc.in_place = array<i64: 0, 1, 2>} {
  return
}
