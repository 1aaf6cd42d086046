#include "common/blocking_reactor.h"

#include <grpcpp/server_context.h>

#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/proto_utf8.h"

namespace ibgraphrag::common {
namespace {

grpc::Status PoolExhausted() {
  return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                      absl::StrCat("server busy: ", BlockingCallPool::Default().max_calls(),
                                   " calls in progress (server max_threads); retry later"));
}

}  // namespace

BlockingCallPool& BlockingCallPool::Default() {
  static BlockingCallPool* const pool = new BlockingCallPool();
  return *pool;
}

void BlockingCallPool::AddServerThreadBudget(int max_threads) {
  if (max_threads <= 0) return;
  absl::MutexLock lock(&mu_);
  max_calls_ += max_threads;
}

int BlockingCallPool::max_calls() const {
  absl::MutexLock lock(&mu_);
  return max_calls_;
}

bool BlockingCallPool::Run(std::function<void()> work) {
  absl::MutexLock lock(&mu_);
  if (max_calls_ > 0 && calls_ >= max_calls_) return false;
  ++calls_;
  queue_.push_back(std::move(work));
  // Every queued call needs a thread of its own: start one unless enough are parked.
  if (static_cast<int>(queue_.size()) > idle_) std::thread([this] { Worker(); }).detach();
  return true;
}

void BlockingCallPool::Worker() {
  const auto has_work = +[](std::deque<std::function<void()>>* q) { return !q->empty(); };
  mu_.Lock();
  while (true) {
    ++idle_;
    const bool woken = mu_.AwaitWithTimeout(absl::Condition(has_work, &queue_), absl::Seconds(30));
    --idle_;
    if (!woken) {
      // Parked a while without work: leave unless the pool would keep too few threads.
      if (idle_ >= kMaxIdleThreads) break;
      continue;
    }
    std::function<void()> work = std::move(queue_.front());
    queue_.pop_front();
    mu_.Unlock();
    work();
    work = nullptr;  // the call's captured state goes before the thread parks again
    mu_.Lock();
    --calls_;
  }
  mu_.Unlock();
}

google::protobuf::ArenaOptions HandlerArenaOptions() {
  google::protobuf::ArenaOptions options;
  options.start_block_size = 64 << 10;
  options.max_block_size = 1 << 20;
  return options;
}

grpc::ServerUnaryReactor* RunBlockingUnary(grpc::CallbackServerContext* context,
                                           std::function<grpc::Status()> handler) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  const bool accepted = BlockingCallPool::Default().Run(
      [reactor, handler = std::move(handler)] { reactor->Finish(handler()); });
  if (!accepted) reactor->Finish(PoolExhausted());
  return reactor;
}

namespace {

// A server-streaming reactor driven by one pool thread: Write starts a gRPC write and waits for
// its OnWriteDone, so at most one write is ever outstanding, as the callback API requires.
class BlockingWriteReactor final : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  explicit BlockingWriteReactor(std::function<grpc::Status(const StreamWrite&)> handler) {
    const bool accepted = BlockingCallPool::Default().Run([this, handler = std::move(handler)] {
      const StreamWrite write = [this](const google::protobuf::Message& m) { return Write(m); };
      Finish(handler(write));
    });
    if (!accepted) Finish(PoolExhausted());
  }

  void OnWriteDone(bool ok) override {
    absl::MutexLock lock(&mu_);
    write_ok_ = ok;
    writing_ = false;
  }
  void OnDone() override { delete this; }

 private:
  bool Write(const google::protobuf::Message& message) {
    {
      absl::MutexLock lock(&mu_);
      if (!write_ok_) return false;
      writing_ = true;
    }
    SerializeToByteBuffer(message, &pending_);
    StartWrite(&pending_);
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(
        +[](bool* writing) { return !*writing; }, &writing_));
    return write_ok_;
  }

  absl::Mutex mu_;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool write_ok_ ABSL_GUARDED_BY(mu_) = true;
  grpc::ByteBuffer pending_;  // the message being written; gRPC reads it until OnWriteDone
};

}  // namespace

grpc::ServerWriteReactor<grpc::ByteBuffer>* RunBlockingServerStream(
    std::function<grpc::Status(const StreamWrite& write)> handler) {
  return new BlockingWriteReactor(std::move(handler));
}

}  // namespace ibgraphrag::common
