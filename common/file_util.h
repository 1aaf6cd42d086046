// File helpers every service and tool shares (modelled on RocksDB's env.h ReadFileToString /
// WriteStringToFile): whole-file reads with errors that name the path, atomic replacement of a
// file (temp file + fsync + rename + fsync of the folder), and SHA-256 digests through OpenSSL.
#ifndef IBGRAPHRAG_COMMON_FILE_UTIL_H_
#define IBGRAPHRAG_COMMON_FILE_UTIL_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ibgraphrag::common {

// The bytes of the file at `path`. NOT_FOUND when it does not exist, PERMISSION_DENIED when it
// cannot be opened for reading, another errno-derived code for read errors; every message names
// the path.
absl::StatusOr<std::string> ReadFileToString(const std::string& path);

// ReadFileToString for a path that a config field or flag named: any error becomes
// INVALID_ARGUMENT "<field>: <why>", so the message points at the setting to fix.
absl::StatusOr<std::string> ReadFileNamedByField(absl::string_view field, const std::string& path);

// Replaces (or creates) `path` with `data` so that a reader, or the file system after a crash,
// sees either the old content or the new one, never a half-written file: the bytes go to a temp
// file in the same folder, which is fsynced, renamed over `path`, and the folder is fsynced.
// The temp file is removed when any step fails.
absl::Status WriteStringToFileAtomic(const std::string& path, absl::string_view data);

// fsyncs the folder `dir` so that a rename or create inside it survives a crash.
absl::Status FsyncDirectory(const std::string& dir);

using Sha256Digest = std::array<uint8_t, 32>;

// SHA-256 of `data`: raw bytes and 64 lower-case hex characters (what `sha256sum` prints).
Sha256Digest Sha256(absl::string_view data);
std::string Sha256Hex(absl::string_view data);
// Hex SHA-256 of the bytes of the file at `path`, read in chunks (multi-GB dumps never sit in
// memory). Errors as for ReadFileToString.
absl::StatusOr<std::string> Sha256HexOfFile(const std::string& path);

// Lower-case hex of `digest`.
std::string DigestToHex(const Sha256Digest& digest);

// Incremental SHA-256 for data that arrives in pieces (readers hashing the bytes they stream).
// Copyable, so a running digest can be read without ending it.
class Sha256Hasher {
 public:
  Sha256Hasher();
  ~Sha256Hasher();
  Sha256Hasher(const Sha256Hasher& other);
  Sha256Hasher& operator=(const Sha256Hasher& other);

  void Update(const void* data, size_t size);
  void Update(absl::string_view data) { Update(data.data(), data.size()); }
  // The digest of everything passed to Update so far; more Updates may follow.
  Sha256Digest Digest() const;
  std::string HexDigest() const { return DigestToHex(Digest()); }

 private:
  struct Context;
  std::unique_ptr<Context> context_;
};

}  // namespace ibgraphrag::common

#endif  // IBGRAPHRAG_COMMON_FILE_UTIL_H_
