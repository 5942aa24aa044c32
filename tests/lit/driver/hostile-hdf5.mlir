// HDF5 files that crash, hang or overflow libhdf5 1.10 (the fuzzers'
// reproducers in tests/fuzz/findings). libhdf5 runs in a child process of
// kcc (frontend/keras/Hdf5Process.h): each file is a clear error naming it,
// never a crash or a hang of kcc, within 4 GB of address space.
// RUN: rm -rf %t && mkdir -p %t
// RUN: cp %kcc_src/tests/fuzz/findings/* %t/

// A SEGV in libhdf5 (in-process, kcc died with a stack dump).
// RUN: not %limit-as kcc --emit=kc %t/keras-archive-libhdf5-segv.keras 2>&1 | FileCheck %s --check-prefix=SEGV
// SEGV: kcc: error: {{.*}}segv.keras:model.weights.h5: layers/dense/vars: libhdf5 crashed (SIGSEGV); the file is corrupt

// A memcpy out of bounds in H5HG_read (SIGSEGV; ASan's report in an ASan
// kcc).
// RUN: not %limit-as kcc --emit=kc %t/keras-h5-libhdf5-segv-H5HG_read.h5 2>&1 | FileCheck %s --check-prefix=HEAP
// HEAP: kcc: error: {{.*}}segv-H5HG_read.h5: /: {{libhdf5 crashed \(SIGSEGV\)|the HDF5 reader failed \(exit status 1\)}}; the file is corrupt

// An endless loop in H5HG_read: the request times out. Only this file gets
// the short timeout: an ASan reader takes seconds to report the others.
// RUN: not %limit-as env KCC_HDF5_TIMEOUT_SECONDS=2 kcc --emit=kc %t/keras-h5-libhdf5-hang-H5HG_read.h5 2>&1 | FileCheck %s --check-prefix=HANG
// HANG: kcc: error: {{.*}}hang-H5HG_read.h5: /: libhdf5 did not answer within 2 s (KCC_HDF5_TIMEOUT_SECONDS); the file is corrupt

// A heap-use-after-free (H5O__msg_iterate_real), a 7 TiB malloc
// (H5C_protect) and a heap overflow (H5A__read): silent in a release
// libhdf5, they end in whatever error the damaged file gives; in an ASan
// kcc (scripts/sanitize.sh) the reader's report ends the reader.
// RUN: not %limit-as kcc --emit=kc %t/keras-archive-libhdf5-uaf-H5O__msg_iterate_real.keras 2>&1 | FileCheck %s --check-prefix=UAF
// RUN: not %limit-as kcc --emit=kc %t/keras-h5-libhdf5-7tib-alloc-H5C_protect.h5 2>&1 | FileCheck %s --check-prefix=ALLOC
// RUN: not %limit-as kcc --emit=kc %t/keras-h5-libhdf5-overflow-H5A__read.h5 2>&1 | FileCheck %s --check-prefix=OVERFLOW
// UAF: kcc: error: {{.*}}uaf-H5O__msg_iterate_real.keras:model.weights.h5: layers/
// ALLOC: kcc: error: {{.*}}7tib-alloc-H5C_protect.h5: {{(model_weights: layer 'dense_1' \(Dense\): no weights for this layer in the file|.*the HDF5 reader failed \(exit status 1\); the file is corrupt)}}
// OVERFLOW: kcc: error: {{.*}}overflow-H5A__read.h5{{(:training_config:1:23: invalid JSON|: .*the HDF5 reader failed \(exit status 1\); the file is corrupt)}}

// kcc's own findings, fixed: a vlen string list that fails part-way, a
// zip member declaring 4 GiB.
// RUN: not %limit-as kcc --emit=kc %t/keras-h5-hdf5cpp146-vlen-leak.h5 2>&1 | FileCheck %s --check-prefix=VLEN
// RUN: not %limit-as kcc --emit=kc %t/keras-archive-files58-4gib-alloc.keras 2>&1 | FileCheck %s --check-prefix=ZIP4G
// VLEN: kcc: error: {{.*}}vlen-leak.h5: model_weights: unreadable attribute 'layer_names'
// ZIP4G: kcc: error: {{.*}}4gib-alloc.keras:config.json: declares 4294963116 bytes, more than the limit of 268435456

// A well-formed file still imports through the reader process.
// RUN: %limit-as kcc --emit=kc %kcc_src/tests/fixtures/keras/mlp_keras2.h5 -o - | FileCheck %s --check-prefix=OK
// OK: func.func @forward
