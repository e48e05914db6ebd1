// Stands in for libprof.so in the collect.sh tests: a shared library that does nothing, so that
// LD_PRELOAD and the injection variables can point at a real file without a GPU or a build of
// libprof.so (sanitizer builds have none).
extern "C" int LibprofCollectTestStub() { return 0; }
