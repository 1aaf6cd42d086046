// Runs blocking handlers of callback-API methods off gRPC's threads. Raw callback methods (the
// generated WithRawCallbackMethod_<Rpc>, public API) hand a handler the request as bytes, which
// is what a service needs to name a field with invalid UTF-8 (common/proto_utf8.h); but their
// reactions run on gRPC's own small set of threads, where a handler waiting seconds on
// downstream RPCs or an LLM would stall every other call. These adapters move the handler to a
// thread of BlockingCallPool and give it the sync API's shape back: a function returning a
// status, and for server streaming a blocking Write.
//
//   grpc::ServerUnaryReactor* Answer(grpc::CallbackServerContext* context,
//                                    const grpc::ByteBuffer* request,
//                                    grpc::ByteBuffer* response) override {
//     return common::RunBlockingUnary(context, [=] { return HandleAnswer(context, *request,
//                                                                        response); });
//   }
#ifndef IBGRAPHRAG_COMMON_BLOCKING_REACTOR_H_
#define IBGRAPHRAG_COMMON_BLOCKING_REACTOR_H_

#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/server_callback.h>
#include <grpcpp/support/status.h>

#include <deque>
#include <functional>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/grpc_status.h"
#include "common/proto_utf8.h"
#include "google/protobuf/arena.h"
#include "google/protobuf/message.h"

namespace grpc {
class CallbackServerContext;
}  // namespace grpc

namespace ibgraphrag::common {

// Threads for blocking handlers, created as calls need them (like the sync server's thread
// manager): a call never waits for another to finish, and up to kMaxIdleThreads threads stay
// parked between calls so a steady load does not start a thread per call.
class BlockingCallPool {
 public:
  // The process-wide pool; never destroyed (its threads may outlive static destruction).
  static BlockingCallPool& Default();

  // Runs `work` on a pool thread; false (and `work` not run) when max_calls() calls are already
  // running or queued, so a flood fails fast instead of starting a thread per call.
  bool Run(std::function<void()> work);

  // Raises the bound on calls in the pool by `max_threads`, one server's
  // ServerRunner::Options::max_threads (the sync server's resource-quota setting, which no longer
  // bounds handlers that run here). Servers in one process (the all-in-one server) add up. No
  // bound until a server sets one; `max_threads` <= 0 adds nothing.
  void AddServerThreadBudget(int max_threads);
  // The bound on calls in the pool; 0 = none.
  int max_calls() const;

 private:
  static constexpr int kMaxIdleThreads = 16;
  BlockingCallPool() = default;
  void Worker();

  mutable absl::Mutex mu_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  int idle_ ABSL_GUARDED_BY(mu_) = 0;
  // Calls accepted by Run and not yet finished, and the bound on them (0 = none).
  int calls_ ABSL_GUARDED_BY(mu_) = 0;
  int max_calls_ ABSL_GUARDED_BY(mu_) = 0;
};

// Unary: runs `handler` on the pool and finishes the call with its status. The request and
// response buffers gRPC passed to the method stay valid until then. When the pool is at its
// bound the call fails at once with RESOURCE_EXHAUSTED, as the sync server does past
// max_threads.
grpc::ServerUnaryReactor* RunBlockingUnary(grpc::CallbackServerContext* context,
                                           std::function<grpc::Status()> handler);

// The options of the arena a handler's request and response live on: its first block holds a
// typical response (100 evidence triples with their names and sources), so most calls allocate
// one block, and every message, repeated field and string object of the call is freed at once.
google::protobuf::ArenaOptions HandlerArenaOptions();

// A unary raw method with a typed handler: parses the request with ParseRequestBytes (so a
// field with invalid UTF-8 gets INVALID_ARGUMENT naming it), runs `typed` on the pool and
// serializes its response when it succeeds. Request and response live on one arena for the
// call (HandlerArenaOptions): messages the handler builds on `response->GetArena()` join it.
template <typename Request, typename Response>
grpc::ServerUnaryReactor* RunTypedUnary(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request_bytes,
    grpc::ByteBuffer* response_bytes,
    std::function<grpc::Status(const Request& request, Response* response)> typed) {
  return RunBlockingUnary(context, [request_bytes, response_bytes, typed = std::move(typed)] {
    google::protobuf::Arena arena(HandlerArenaOptions());
    auto* request = google::protobuf::Arena::CreateMessage<Request>(&arena);
    const absl::Status parsed = ParseRequestBytes(*request_bytes, request);
    if (!parsed.ok()) return ToGrpcStatus(parsed);
    auto* response = google::protobuf::Arena::CreateMessage<Response>(&arena);
    grpc::Status status = typed(*request, response);
    if (status.ok()) SerializeToByteBuffer(*response, response_bytes);
    return status;
  });
}

// Writes one message of a server stream; false once the stream is broken (the caller went away
// or the call was cancelled). Blocks until gRPC has taken the message.
using StreamWrite = std::function<bool(const google::protobuf::Message&)>;

// Server streaming: runs `handler` on the pool with a blocking writer and finishes the call with
// its status (RESOURCE_EXHAUSTED at once when the pool is at its bound).
grpc::ServerWriteReactor<grpc::ByteBuffer>* RunBlockingServerStream(
    std::function<grpc::Status(const StreamWrite& write)> handler);

}  // namespace ibgraphrag::common

#endif  // IBGRAPHRAG_COMMON_BLOCKING_REACTOR_H_
