#include "services/gateway/api_keys.h"

#include <openssl/crypto.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/file_util.h"
#include "common/logging.h"

namespace ibgraphrag::gateway {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool ParseHexDigest(absl::string_view hex, common::Sha256Digest* out) {
  if (hex.size() != 64) return false;
  for (size_t i = 0; i < 32; ++i) {
    const int hi = HexValue(hex[2 * i]);
    const int lo = HexValue(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    (*out)[i] = static_cast<uint8_t>(hi * 16 + lo);
  }
  return true;
}

}  // namespace

absl::StatusOr<std::vector<ApiKeyEntry>> ParseApiKeys(absl::string_view text) {
  std::vector<ApiKeyEntry> entries;
  absl::flat_hash_set<std::string> ids;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    const size_t colon = line.rfind(':');
    ApiKeyEntry entry;
    if (colon == absl::string_view::npos || colon == 0 ||
        !ParseHexDigest(absl::StripAsciiWhitespace(line.substr(colon + 1)), &entry.hash)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "api_keys_file: line ", line_number,
          ": expected <key id>:<64 hex digits of the key's SHA-256> (the key itself is never "
          "stored)"));
    }
    entry.key_id = std::string(absl::StripAsciiWhitespace(line.substr(0, colon)));
    if (!ids.insert(entry.key_id).second) {
      return absl::InvalidArgumentError(absl::StrCat("api_keys_file: line ", line_number,
                                                     ": duplicate key id '", entry.key_id, "'"));
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

absl::StatusOr<ApiKeyStore::FileStamp> ApiKeyStore::Stamp(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("api_keys_file: cannot stat ", path, ": ", std::strerror(errno)));
  }
  FileStamp stamp;
  stamp.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  stamp.size = static_cast<int64_t>(st.st_size);
  stamp.inode = static_cast<uint64_t>(st.st_ino);
  return stamp;
}

absl::StatusOr<std::unique_ptr<ApiKeyStore>> ApiKeyStore::Load(const std::string& path,
                                                               absl::Duration reload_interval) {
  if (path.empty()) return absl::InvalidArgumentError("api_keys_file: empty path");
  std::unique_ptr<ApiKeyStore> store(new ApiKeyStore(path, reload_interval));
  absl::StatusOr<bool> loaded = store->ReloadIfChanged();
  if (!loaded.ok()) return loaded.status();
  return store;
}

absl::StatusOr<bool> ApiKeyStore::ReloadIfChanged() {
  absl::StatusOr<FileStamp> stamp = Stamp(path_);
  if (!stamp.ok()) return stamp.status();
  {
    absl::MutexLock lock(&mu_);
    last_check_ = absl::Now();
    if (keys_ != nullptr && *stamp == stamp_) return false;
  }
  absl::StatusOr<std::string> text = common::ReadFileNamedByField("api_keys_file", path_);
  if (!text.ok()) return text.status();
  absl::StatusOr<std::vector<ApiKeyEntry>> keys = ParseApiKeys(*text);
  if (!keys.ok()) return keys.status();
  const size_t count = keys->size();
  {
    absl::MutexLock lock(&mu_);
    keys_ = std::make_shared<const std::vector<ApiKeyEntry>>(*std::move(keys));
    stamp_ = *stamp;
  }
  common::LogInfo("gateway: API keys loaded", {{"path", path_}, {"keys", count}});
  return true;
}

absl::StatusOr<std::string> ApiKeyStore::Authenticate(absl::string_view presented_key) {
  bool check = false;
  {
    absl::MutexLock lock(&mu_);
    check =
        reload_interval_ > absl::ZeroDuration() && absl::Now() - last_check_ >= reload_interval_;
    if (check) last_check_ = absl::Now();  // one caller re-reads; the others go on
  }
  if (check) {
    absl::StatusOr<bool> reloaded = ReloadIfChanged();
    if (!reloaded.ok()) {
      common::LogError("gateway: API key file could not be re-read; previous keys stay in force",
                       {{"error", reloaded.status().ToString()}});
    }
  }
  std::shared_ptr<const std::vector<ApiKeyEntry>> keys;
  {
    absl::MutexLock lock(&mu_);
    keys = keys_;
  }
  const absl::Status refused = absl::UnauthenticatedError(
      "missing or invalid API key (send 'authorization: Bearer <key>' or 'x-api-key: <key>')");
  if (presented_key.empty() || keys == nullptr) return refused;
  const common::Sha256Digest digest = common::Sha256(presented_key);
  const ApiKeyEntry* match = nullptr;
  // Every entry is compared, in constant time each, whatever matches.
  for (const ApiKeyEntry& entry : *keys) {
    if (CRYPTO_memcmp(entry.hash.data(), digest.data(), digest.size()) == 0) match = &entry;
  }
  if (match == nullptr) return refused;
  return match->key_id;
}

size_t ApiKeyStore::size() const {
  absl::MutexLock lock(&mu_);
  return keys_ == nullptr ? 0 : keys_->size();
}

std::string PresentedKey(absl::string_view authorization_header, absl::string_view api_key_header) {
  absl::string_view auth = absl::StripAsciiWhitespace(authorization_header);
  if (auth.size() > 7 && absl::StartsWithIgnoreCase(auth, "bearer ")) {
    return std::string(absl::StripAsciiWhitespace(auth.substr(7)));
  }
  return std::string(absl::StripAsciiWhitespace(api_key_header));
}

}  // namespace ibgraphrag::gateway
