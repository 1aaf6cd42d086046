// Linked (as the object library ibgr_thread_stack_floor) into every server executable that also
// loads OpenBLAS through FAISS or LibTorch. libopenblas carries ~60 KiB
// of static TLS, which glibc carves out of every thread's stack. civetweb (the Prometheus
// /metrics server) starts its workers with a small fixed stack (compile-time USE_STACK_SIZE),
// so with OpenBLAS loaded a worker overflows inside snprintf on the first scrape (SIGSEGV).
// Interposing pthread_attr_setstacksize gives every explicitly sized thread at least 1 MiB of
// (virtual, lazily committed) stack. A fix in common/metrics.cc would need an Exposer option
// civetweb does not have, so the floor is this interposer, linked only into executables.
#include <dlfcn.h>
#include <pthread.h>

#include <algorithm>
#include <cstddef>

extern "C" int pthread_attr_setstacksize(pthread_attr_t* attr, size_t stack_size) {
  using Fn = int (*)(pthread_attr_t*, size_t);
  static const Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "pthread_attr_setstacksize"));
  constexpr size_t kMinStackBytes = size_t{1} << 20;
  if (real == nullptr) return 0;  // keep the default stack size rather than fail thread creation
  return real(attr, std::max(stack_size, kMinStackBytes));
}
