// Hot-swappable servables: the one holder and version watcher that kgstore (KG snapshots),
// alignment (bundles), the retriever (models) and encoders use.
//
// ServableHolder<T> is modelled on TF Serving's FastReadDynamicPtr: a request takes a
// shared_ptr to the current version (a reader lock and a reference-count increment) and keeps it
// for the whole request, so a swap never changes the servable under a request. Unlike a bare
// shared_ptr swap, the holder keeps every retired version until no request uses it any more and
// releases it from ReleaseRetired(), which the watcher thread calls: the destructor of an old
// version (closing RocksDB, unmapping files, freeing a FAISS index: tens of milliseconds) never
// runs on a request thread.
//
// ServableManager<T> is the storage-path source + manager: it resolves the newest (or pinned)
// version of a VersionedArtifactDir, loads it with the service's loader and swaps it in, and with
// a watch interval does so periodically on its own thread. A version that fails to load is
// logged (once per distinct error) and the current one keeps serving.
#ifndef IBGRAPHRAG_COMMON_SERVABLE_HOLDER_H_
#define IBGRAPHRAG_COMMON_SERVABLE_HOLDER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/logging.h"
#include "common/versioned_artifacts.h"

namespace ibgraphrag::common {

template <typename T>
class ServableHolder {
 public:
  using Ptr = std::shared_ptr<T>;

  ServableHolder() = default;
  ServableHolder(const ServableHolder&) = delete;
  ServableHolder& operator=(const ServableHolder&) = delete;

  // The current version (null before the first Swap). Hold it for the whole request.
  Ptr Get() const {
    absl::ReaderMutexLock lock(&mu_);
    return current_;
  }
  // Version number of the current servable (0 = none, or one loaded from an unversioned path).
  int64_t version() const {
    absl::ReaderMutexLock lock(&mu_);
    return version_;
  }

  // Installs `next` as `version`. The previous servable is retired, not destroyed: see
  // ReleaseRetired.
  void Swap(Ptr next, int64_t version) {
    absl::MutexLock lock(&mu_);
    if (current_ != nullptr) retired_.push_back(std::move(current_));
    current_ = std::move(next);
    version_ = version;
  }

  // Destroys retired servables that no request holds any more, on the calling thread; returns
  // how many are still in use. A retired servable can gain no new users (Get returns only the
  // current one), so once its use count is 1 (this holder) it stays 1.
  size_t ReleaseRetired() {
    std::vector<Ptr> unused;
    size_t in_use = 0;
    {
      absl::MutexLock lock(&mu_);
      std::vector<Ptr> keep;
      for (Ptr& p : retired_) {
        if (p.use_count() == 1) {
          unused.push_back(std::move(p));
        } else {
          keep.push_back(std::move(p));
        }
      }
      retired_ = std::move(keep);
      in_use = retired_.size();
    }
    unused.clear();  // destructors run here, outside the lock
    return in_use;
  }

 private:
  mutable absl::Mutex mu_;
  Ptr current_ ABSL_GUARDED_BY(mu_);
  int64_t version_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<Ptr> retired_ ABSL_GUARDED_BY(mu_);
};

template <typename T>
class ServableManager {
 public:
  using Ptr = std::shared_ptr<T>;
  // Loads the version directory `dir` (version `version`); an error keeps the current servable.
  using Loader = std::function<absl::StatusOr<Ptr>(const std::string& dir, int64_t version)>;
  // Called after each swap, on the thread that swapped (gauges, logs).
  using SwapListener = std::function<void(const Ptr& servable, int64_t version)>;

  struct Options {
    // Where the versions live and how they are named in messages.
    VersionedArtifactDir::Options artifacts;
    // Serve exactly this version (no watching); unset = the newest.
    std::optional<int64_t> pinned_version;
    // Serve exactly this directory, outside any versioned layout (no watching); overrides the
    // two fields above.
    std::string fixed_dir;
    // When > 0 (and neither pinned_version nor fixed_dir is set), look for a newer version this
    // often. Retired versions are released on the same thread.
    absl::Duration watch_interval = absl::ZeroDuration();
    // Component name in log lines ("kgstore", "alignment", ...).
    std::string log_name;
  };

  ServableManager(Options options, Loader loader, SwapListener on_swap = nullptr)
      : options_(std::move(options)),
        artifacts_(options_.artifacts),
        loader_(std::move(loader)),
        on_swap_(std::move(on_swap)),
        load_status_(absl::UnavailableError(absl::StrCat(options_.log_name, ": not loaded yet"))) {}
  ~ServableManager() { StopWatching(); }
  ServableManager(const ServableManager&) = delete;
  ServableManager& operator=(const ServableManager&) = delete;

  const ServableHolder<T>& holder() const { return *holder_; }
  // For readers that may outlive the manager (they then keep the last version served).
  std::shared_ptr<const ServableHolder<T>> shared_holder() const { return holder_; }
  Ptr Get() const { return holder_->Get(); }
  int64_t version() const { return holder_->version(); }
  const VersionedArtifactDir& artifacts() const { return artifacts_; }
  // OK once a servable is loaded and the last attempt succeeded; otherwise why not.
  absl::Status load_status() const {
    absl::MutexLock lock(&status_mu_);
    return load_status_;
  }

  // Loads the directory to serve (fixed, pinned or newest) if it is not the one being served;
  // true when it swapped. Also releases retired versions no request holds any more.
  absl::StatusOr<bool> ReloadIfNewer() {
    absl::MutexLock reload_lock(&reload_mu_);
    absl::StatusOr<bool> swapped = ReloadLocked();
    holder_->ReleaseRetired();
    absl::MutexLock lock(&status_mu_);
    load_status_ = swapped.ok() ? absl::OkStatus() : swapped.status();
    return swapped;
  }

  // Starts the watcher thread when the options ask for one; idempotent.
  void StartWatching() {
    if (watcher_.joinable() || options_.watch_interval <= absl::ZeroDuration() ||
        options_.pinned_version.has_value() || !options_.fixed_dir.empty()) {
      return;
    }
    watcher_ = std::thread([this] { WatchLoop(); });
  }
  void StopWatching() {
    if (!stop_.HasBeenNotified()) stop_.Notify();
    if (watcher_.joinable()) watcher_.join();
  }

 private:
  absl::StatusOr<bool> ReloadLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(reload_mu_) {
    std::string dir = options_.fixed_dir;
    int64_t version = 0;
    if (dir.empty()) {
      absl::StatusOr<int64_t> resolved = artifacts_.ResolveVersion(options_.pinned_version);
      if (!resolved.ok()) return resolved.status();
      version = *resolved;
      dir = artifacts_.VersionDir(version);
    }
    if (dir == serving_dir_) return false;
    absl::StatusOr<Ptr> loaded = loader_(dir, version);
    if (!loaded.ok()) return loaded.status();
    if (on_swap_) on_swap_(*loaded, version);
    holder_->Swap(*std::move(loaded), version);
    serving_dir_ = dir;
    return true;
  }

  void WatchLoop() {
    absl::Status last_error;
    while (!stop_.WaitForNotificationWithTimeout(options_.watch_interval)) {
      absl::StatusOr<bool> swapped = ReloadIfNewer();
      if (swapped.ok()) {
        last_error = absl::OkStatus();
      } else if (swapped.status() != last_error) {
        last_error = swapped.status();
        LogWarning(absl::StrCat(options_.log_name, ": new version not loaded; still serving ",
                                holder_->Get() != nullptr ? "the current one" : "nothing"),
                   {{"error", last_error.ToString()}});
      }
    }
  }

  const Options options_;
  const VersionedArtifactDir artifacts_;
  const Loader loader_;
  const SwapListener on_swap_;
  const std::shared_ptr<ServableHolder<T>> holder_ = std::make_shared<ServableHolder<T>>();
  absl::Mutex reload_mu_;
  std::string serving_dir_ ABSL_GUARDED_BY(reload_mu_);
  mutable absl::Mutex status_mu_;
  absl::Status load_status_ ABSL_GUARDED_BY(status_mu_);
  absl::Notification stop_;
  std::thread watcher_;
};

}  // namespace ibgraphrag::common

#endif  // IBGRAPHRAG_COMMON_SERVABLE_HOLDER_H_
