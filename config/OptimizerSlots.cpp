//===- OptimizerSlots.cpp - The optimizer state's layout ------------------===//
//
// Which state tensors each Keras optimizer keeps, and in which order Keras
// lists them (see OptimizerSlots.h).
//
//===----------------------------------------------------------------------===//

#include "config/OptimizerSlots.h"

#include "llvm/Support/ErrorHandling.h"

namespace kcc {

llvm::SmallVector<SlotSpec> slotSpecs(const OptimizerConfig &config) {
  switch (config.kind) {
  case OptimizerKind::SGD:
    if (config.momentum != 0.0)
      return {{"momentum"}};
    return {};
  case OptimizerKind::Adam:
  case OptimizerKind::AdamW:
    if (config.amsgrad)
      return {{"momentum"}, {"velocity"}, {"velocity_hat"}};
    return {{"momentum"}, {"velocity"}};
  case OptimizerKind::Nadam:
    return {{"momentum"}, {"velocity"}};
  case OptimizerKind::RMSprop: {
    llvm::SmallVector<SlotSpec> slots = {{"velocity"}};
    if (config.momentum > 0.0)
      slots.push_back({"momentum"});
    if (config.centered)
      slots.push_back({"average_gradient"});
    return slots;
  }
  case OptimizerKind::Adagrad:
    return {{"accumulator", config.initialAccumulatorValue}};
  case OptimizerKind::Adamax:
    return {{"momentum"}, {"norm"}};
  case OptimizerKind::Lion:
    return {{"momentum"}};
  }
  llvm_unreachable("unknown optimizer");
}

llvm::SmallVector<std::string> slotNames(const OptimizerConfig &config) {
  llvm::SmallVector<std::string> names;
  for (const SlotSpec &s : slotSpecs(config))
    names.push_back(s.name);
  return names;
}

llvm::SmallVector<SlotSpec> globalSlotSpecs(const OptimizerConfig &config) {
  if (config.kind == OptimizerKind::Nadam)
    return {{"u_product", 1.0}};
  return {};
}

std::vector<unsigned> kerasStateOrder(const OptimizerConfig &config,
                                      unsigned numTrainable) {
  unsigned slots = slotSpecs(config).size();
  std::vector<unsigned> order;
  if (config.kind == OptimizerKind::RMSprop) {
    // build() adds all velocities, then all momentums, then all average
    // gradients.
    for (unsigned s = 0; s < slots; ++s)
      for (unsigned p = 0; p < numTrainable; ++p)
        order.push_back(p * slots + s);
  } else if (config.amsgrad && (config.kind == OptimizerKind::Adam ||
                                config.kind == OptimizerKind::AdamW)) {
    // build() adds momentum and velocity per variable, then every
    // velocity_hat.
    for (unsigned p = 0; p < numTrainable; ++p)
      order.insert(order.end(), {p * slots, p * slots + 1});
    for (unsigned p = 0; p < numTrainable; ++p)
      order.push_back(p * slots + 2);
  } else {
    for (unsigned i = 0; i < numTrainable * slots; ++i)
      order.push_back(i);
  }
  for (unsigned g = 0, e = globalSlotSpecs(config).size(); g < e; ++g)
    order.push_back(numTrainable * slots + g);
  return order;
}

} // namespace kcc
