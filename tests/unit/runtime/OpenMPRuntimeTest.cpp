//===- OpenMPRuntimeTest.cpp - One OpenMP runtime in the process ----------===//
//
// The kernels (g++ -fopenmp) and oneDNN call GNU OpenMP's GOMP_* / omp_*
// entry points, generated loops LLVM's __kmpc_*. libomp implements both, so
// when it precedes libgomp in the process's symbol lookup every parallel
// region runs on one thread team. These tests check that lookup order: a
// lookup from the global scope is what libdnnl's and the kernels' GOMP_*
// references get.
//
//===----------------------------------------------------------------------===//

#include "gtest/gtest.h"

#include <dlfcn.h>
#include <link.h>

#include <string>
#include <vector>

namespace {

/// The file of the shared object that defines `symbol` for a lookup from
/// the main program (the global scope).
std::string definingObject(const char *symbol) {
  void *address = ::dlsym(RTLD_DEFAULT, symbol);
  if (!address)
    return "";
  Dl_info info;
  if (!::dladdr(address, &info) || !info.dli_fname)
    return "";
  return info.dli_fname;
}

bool isLibomp(const std::string &path) {
  return path.find("libomp") != std::string::npos;
}

TEST(OpenMPRuntime, GnuAndLlvmEntryPointsResolveToLibomp) {
  for (const char *symbol :
       {"GOMP_parallel", "GOMP_barrier", "omp_get_max_threads",
        "omp_get_thread_num", "__kmpc_fork_call"}) {
    std::string object = definingObject(symbol);
    EXPECT_TRUE(isLibomp(object)) << symbol << " comes from '" << object << "'";
  }
}

TEST(OpenMPRuntime, LibompPrecedesLibgompInTheLoadOrder) {
  std::vector<std::string> order;
  ::dl_iterate_phdr(
      [](struct dl_phdr_info *info, size_t, void *data) {
        static_cast<std::vector<std::string> *>(data)->push_back(
            info->dlpi_name ? info->dlpi_name : "");
        return 0;
      },
      &order);
  int omp = -1, gomp = -1;
  for (int i = 0; i < static_cast<int>(order.size()); ++i) {
    if (omp < 0 && isLibomp(order[i]))
      omp = i;
    if (gomp < 0 && order[i].find("libgomp") != std::string::npos)
      gomp = i;
  }
  ASSERT_GE(omp, 0) << "libomp is not loaded";
  if (gomp >= 0) {
    EXPECT_LT(omp, gomp) << order[omp] << " after " << order[gomp];
  }
}

} // namespace
