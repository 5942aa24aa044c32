func.func @update_candidates_not_array() attributes {kc.update_candidates = [0, 1]} {
  return
}
