# Every third-party dependency, found from Debian packages (scripts/install_deps.sh installs them).
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)

find_package(Protobuf REQUIRED)
find_package(gRPC CONFIG REQUIRED)            # gRPC::grpc++, gRPC::grpc++_reflection, grpc_cpp_plugin
find_package(absl CONFIG REQUIRED)
find_package(RocksDB CONFIG QUIET)
if(NOT RocksDB_FOUND)
  find_library(ROCKSDB_LIBRARY rocksdb REQUIRED)
  add_library(RocksDB::rocksdb UNKNOWN IMPORTED)
  set_target_properties(RocksDB::rocksdb PROPERTIES IMPORTED_LOCATION ${ROCKSDB_LIBRARY})
endif()
find_package(prometheus-cpp CONFIG REQUIRED)  # prometheus-cpp::pull, prometheus-cpp::core
find_package(nlohmann_json CONFIG REQUIRED)
find_package(CURL REQUIRED)
find_package(OpenSSL REQUIRED)                # OpenSSL::Crypto (gateway API key hashes)
# cpp-httplib (libcpp-httplib-dev): Debian builds it as a shared library with OpenSSL, zlib and
# brotli; the pkg-config Cflags carry the matching CPPHTTPLIB_* defines (they change its ABI).
pkg_check_modules(CPPHTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)

# FAISS's CMake config expects these targets to exist already.
find_package(OpenMP REQUIRED)
find_package(BLAS REQUIRED)
find_package(LAPACK REQUIRED)
find_package(faiss CONFIG REQUIRED)

# LibTorch (Debian's libtorch-dev ships TorchConfig.cmake). Only a few .cc files include torch.h.
find_package(Torch CONFIG REQUIRED)
# With libgflags-dev installed, RocksDB's config defines gflags::gflags and Caffe2's old-style
# fallback then defines an imported `gflags` target without a location, which breaks every target
# linking LibTorch at generate time. Give it the library.
if(TARGET gflags)
  get_target_property(_ibgr_gflags_location gflags IMPORTED_LOCATION)
  if(NOT _ibgr_gflags_location)
    find_library(IBGR_GFLAGS_LIBRARY gflags REQUIRED)
    set_property(TARGET gflags PROPERTY IMPORTED_LOCATION ${IBGR_GFLAGS_LIBRARY})
  endif()
endif()

# The serving executables allocate with jemalloc (target ibgr_serving_malloc): under load glibc's
# malloc took about a fifth of the all-in-one's CPU (arena locks, fastbin consolidation); with
# jemalloc the all-in-one answered ~6 % more at 16 clients at the same peak memory
# (docs/benchmarks.md, "Issue 30: CPU per answer"). Not in sanitizer builds, which bring their own
# allocator; tests and tools keep glibc's.
option(IBGR_JEMALLOC "Link the serving executables with jemalloc" ON)
add_library(ibgr_serving_malloc INTERFACE)
if(IBGR_JEMALLOC AND IBGR_SANITIZE STREQUAL "")
  find_library(IBGR_JEMALLOC_LIBRARY jemalloc REQUIRED)
  target_link_libraries(ibgr_serving_malloc INTERFACE ${IBGR_JEMALLOC_LIBRARY})
endif()

if(IBGR_BUILD_TESTS)
  find_package(GTest CONFIG REQUIRED)
endif()
if(IBGR_BUILD_BENCHMARKS)
  find_package(benchmark CONFIG REQUIRED)
endif()

if(NOT DEFINED gRPC_CPP_PLUGIN_EXECUTABLE)
  find_program(gRPC_CPP_PLUGIN_EXECUTABLE grpc_cpp_plugin REQUIRED)
endif()
