// ThreadSanitizer suppressions for the tests that CI runs under --config=tsan: include this
// header in exactly one .cc of the test binary. The runtime looks the function up in the
// executable itself (in a shared library, as Bazel links test deps, it is not found); other
// builds never call it.
#pragma once
//
// oneDNN and libgomp are not built with TSan: their own synchronization (atomics, futexes)
// is invisible to it, so what they do through TSan's interceptors (memcmp, operator new and
// pthread_rwlock in oneDNN's primitive cache, seen here) reads as races. Reports with a frame
// in those libraries are dropped; graft's own accesses outside them stay checked.
extern "C" const char* __tsan_default_suppressions() {
  return "called_from_lib:libdnnl.so.2\n"
         "called_from_lib:libgomp.so.1\n"
         "race:libdnnl.so.2\n"
         "race:libgomp.so.1\n";
}
