// Caller authentication for the gateway: API keys (or bearer tokens) checked against a file of
// SHA-256 hashes. The file is mounted from a Secret and re-read when it changes, so keys rotate
// without a restart:
//
//   # one key per line: <key id>:<hex SHA-256 of the key>; '#' starts a comment
//   clinic-a:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
//
// (`printf '%s' "$KEY" | sha256sum` or common::Sha256Hex prints the hash.) Only hashes are stored;
// a presented key is hashed and compared with every entry in constant time, so neither the file nor
// the timing of a failed check reveals a key. Callers send `authorization: Bearer <key>` or
// `x-api-key: <key>`.
#ifndef IBGRAPHRAG_SERVICES_GATEWAY_API_KEYS_H_
#define IBGRAPHRAG_SERVICES_GATEWAY_API_KEYS_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/file_util.h"

namespace ibgraphrag::gateway {

// One key of the file.
struct ApiKeyEntry {
  std::string key_id;
  common::Sha256Digest hash;  // common::Sha256 of the key
};

// Parses the file's text. INVALID_ARGUMENT naming the line for a malformed line or a duplicate
// key id; an empty list is valid (every caller is then refused).
absl::StatusOr<std::vector<ApiKeyEntry>> ParseApiKeys(absl::string_view text);

class ApiKeyStore {
 public:
  // Reads `path` now (an error here is fatal: the gateway must not start without its keys).
  // With reload_interval > 0 the file is checked that often (by ReloadIfChanged, called from
  // Authenticate) and re-read when its mtime, size or inode changed; a broken new file is logged
  // and the previous keys stay in force.
  static absl::StatusOr<std::unique_ptr<ApiKeyStore>> Load(
      const std::string& path, absl::Duration reload_interval = absl::Seconds(2));

  // The key id of the presented key, or UNAUTHENTICATED (never says which part was wrong).
  absl::StatusOr<std::string> Authenticate(absl::string_view presented_key);

  // Re-reads the file if it changed since the last read; returns whether keys were replaced.
  absl::StatusOr<bool> ReloadIfChanged();

  size_t size() const;

 private:
  struct FileStamp {
    int64_t mtime_ns = 0;
    int64_t size = -1;
    uint64_t inode = 0;
    bool operator==(const FileStamp& o) const {
      return mtime_ns == o.mtime_ns && size == o.size && inode == o.inode;
    }
  };
  ApiKeyStore(std::string path, absl::Duration reload_interval)
      : path_(std::move(path)), reload_interval_(reload_interval) {}
  static absl::StatusOr<FileStamp> Stamp(const std::string& path);

  const std::string path_;
  const absl::Duration reload_interval_;
  mutable absl::Mutex mu_;
  std::shared_ptr<const std::vector<ApiKeyEntry>> keys_ ABSL_GUARDED_BY(mu_);
  FileStamp stamp_ ABSL_GUARDED_BY(mu_);
  absl::Time last_check_ ABSL_GUARDED_BY(mu_);
};

// The key a request presents: `authorization: Bearer <key>` (scheme case-insensitive) or
// `x-api-key: <key>`; empty when neither is there.
std::string PresentedKey(absl::string_view authorization_header, absl::string_view api_key_header);

}  // namespace ibgraphrag::gateway

#endif  // IBGRAPHRAG_SERVICES_GATEWAY_API_KEYS_H_
