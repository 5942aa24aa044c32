//===- Version.cpp - Versions of the libraries the kernels run on ---------===//

#include "runtime/kernels/Kernels.h"

#include <oneapi/dnnl/dnnl.h>

#include <string>

std::string kcc::kernels::oneDnnVersion() {
  const dnnl_version_t *v = dnnl_version();
  return std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
         std::to_string(v->patch);
}
