# Installing kcc: the tools, the public headers under include/kcc/, the
# libraries and a CMake package (kccConfig.cmake) exporting two targets:
#
#   kcc::jit      layers, tracing, the Trainer, the JIT (brings MLIR/LLVM)
#   kcc::runtime  what an AOT-compiled step needs: no MLIR, no LLVM
#
# plus kcc::kcc, the driver, for build steps that compile a model. A
# pkg-config file describes kcc-runtime too. CPack makes a Debian package.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(KCC_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/kcc)
set(KCC_INSTALL_LIBDIR ${CMAKE_INSTALL_LIBDIR}/kcc)
set(KCC_INSTALL_HEADERDIR ${CMAKE_INSTALL_INCLUDEDIR}/kcc)

# Headers keep the tree's layout below include/kcc/ ("frontend/Model.h"),
# with the tablegen'd .h.inc files beside their headers; "kcc/kcc.h" is the
# umbrella. Nothing outside include/kcc/ is needed besides MLIR, LLVM and
# oneDNN's own headers.
foreach(stage config ir passes codegen engine frontend runtime)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${stage}/
    DESTINATION ${KCC_INSTALL_HEADERDIR}/${stage}
    FILES_MATCHING PATTERN "*.h" PATTERN "fuzz" EXCLUDE)
  install(DIRECTORY ${PROJECT_BINARY_DIR}/${stage}/
    DESTINATION ${KCC_INSTALL_HEADERDIR}/${stage}
    FILES_MATCHING PATTERN "*.h.inc" PATTERN "CMakeFiles" EXCLUDE)
endforeach()
install(FILES ${PROJECT_SOURCE_DIR}/include/kcc/kcc.h
  DESTINATION ${KCC_INSTALL_HEADERDIR})

# The two public targets, as interface libraries over the stage libraries.
set(KCC_RUNTIME_LIBS KCCLibraryCalls KCCKernels KCCData)
set(KCC_JIT_LIBS KCCTraining KCCKeras KCCReferenceModels KCCFrontend
  KCCEngine KCCInterpreter KCCAot KCCCodegen KCCPasses KCCTrainingConfig
  KCCIR KCCCollectives ${KCC_RUNTIME_LIBS})
set(KCC_INCLUDE_INTERFACE
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
  $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
  $<INSTALL_INTERFACE:${KCC_INSTALL_HEADERDIR}>)
add_library(kcc_runtime INTERFACE)
target_link_libraries(kcc_runtime INTERFACE ${KCC_RUNTIME_LIBS})
target_include_directories(kcc_runtime INTERFACE ${KCC_INCLUDE_INTERFACE})
set_target_properties(kcc_runtime PROPERTIES EXPORT_NAME runtime)
add_library(kcc_jit INTERFACE)
target_link_libraries(kcc_jit INTERFACE ${KCC_JIT_LIBS})
target_include_directories(kcc_jit INTERFACE ${KCC_INCLUDE_INTERFACE}
  ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
set_target_properties(kcc_jit PROPERTIES EXPORT_NAME jit)
# The same names inside this build, so examples/ build in the tree and out.
add_library(kcc::runtime ALIAS kcc_runtime)
add_library(kcc::jit ALIAS kcc_jit)
add_executable(kcc::kcc ALIAS kcc)

# libMLIR/libLLVM (LLVM's folder) and HDF5 (Debian's serial folder) are not
# on the loader's path: the installed tools keep the folders they link from.
set_target_properties(kcc kcc-opt PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS kcc kcc-opt EXPORT kccTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS kcc_runtime kcc_jit ${KCC_JIT_LIBS} EXPORT kccTargets
  ARCHIVE DESTINATION ${KCC_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${KCC_INSTALL_LIBDIR})
install(EXPORT kccTargets NAMESPACE kcc::
  DESTINATION ${KCC_INSTALL_CMAKEDIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/kccConfig.cmake.in
  ${PROJECT_BINARY_DIR}/kccConfig.cmake
  INSTALL_DESTINATION ${KCC_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/kccConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/kccConfig.cmake
  ${PROJECT_BINARY_DIR}/kccConfigVersion.cmake
  DESTINATION ${KCC_INSTALL_CMAKEDIR})

# pkg-config for the runtime alone (C and C++ programs around an AOT step).
get_filename_component(KCC_OMP_DIR ${KCC_LLVM_OPENMP_LIBRARY} DIRECTORY)
configure_file(${PROJECT_SOURCE_DIR}/cmake/kcc-runtime.pc.in
  ${PROJECT_BINARY_DIR}/kcc-runtime.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/kcc-runtime.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# The Python package's sources, with the _kcc module inside kcc/ so that
# `pip install <datadir>/kcc/python` needs no build tree.
if(TARGET _kcc)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/
    DESTINATION ${CMAKE_INSTALL_DATADIR}/kcc/python
    PATTERN "src" EXCLUDE PATTERN "tests" EXCLUDE
    PATTERN "CMakeLists.txt" EXCLUDE PATTERN "__pycache__" EXCLUDE
    PATTERN "*.egg-info" EXCLUDE)
  set_target_properties(_kcc PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
  install(TARGETS _kcc
    LIBRARY DESTINATION ${CMAKE_INSTALL_DATADIR}/kcc/python/kcc)
endif()

# The Debian package: everything above; its Depends come from what the
# binaries link (dpkg-shlibdeps).
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME kcc)
set(CPACK_PACKAGE_VENDOR "kcc")
set(CPACK_PACKAGE_CONTACT "kcc developers <kcc@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "Graph compiler for Keras-style training steps (MLIR/LLVM 19)")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# libMLIR and libLLVM live in LLVM's own folder, not on the loader's path.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${LLVM_LIBRARY_DIR})
# There, libLLVM is a symlink that Debian's llvm-19-dev ships to the file of
# libllvm19: dpkg-shlibdeps sees only the symlink's (development) package,
# so name the run-time package of the real file.
file(REAL_PATH
  ${LLVM_LIBRARY_DIR}/libLLVM.so.${LLVM_VERSION_MAJOR}.${LLVM_VERSION_MINOR}
  KCC_LIBLLVM_FILE)
execute_process(COMMAND dpkg -S ${KCC_LIBLLVM_FILE}
  OUTPUT_VARIABLE KCC_LIBLLVM_OWNER ERROR_QUIET)
string(REGEX MATCH "^[^:]+" KCC_LIBLLVM_PACKAGE "${KCC_LIBLLVM_OWNER}")
if(KCC_LIBLLVM_PACKAGE)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS ${KCC_LIBLLVM_PACKAGE})
endif()
include(CPack)
