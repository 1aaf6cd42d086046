// A small streaming SHA-256 (FIPS 180-4) so manifests can record source-file digests without
// depending on OpenSSL, which is not guaranteed on every build host.
#ifndef IBGRAPHRAG_SERVICES_KGSTORE_IMPORT_SHA256_H_
#define IBGRAPHRAG_SERVICES_KGSTORE_IMPORT_SHA256_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ibgraphrag::kgstore::import_ {

class Sha256 {
 public:
  // `use_cpu_extensions`: compress with the x86 SHA instructions when the CPU has them (about ten
  // times faster, which matters for multi-GB PrimeKG dumps); false forces the portable code.
  explicit Sha256(bool use_cpu_extensions = true);

  void Reset();
  void Update(const void* data, size_t size);
  void Update(absl::string_view data) { Update(data.data(), data.size()); }
  // Finishes the digest; the object must be Reset() before it is used again.
  std::array<uint8_t, 32> Digest();
  // Finishes the digest and returns it as 64 lower-case hex characters.
  std::string HexDigest();

 private:
  // Compresses `blocks` consecutive 64-byte blocks into state_.
  void Compress(const uint8_t* data, size_t blocks);
  void CompressPortable(const uint8_t* block);

  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_;
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
  bool hardware_ = false;
};

// Hex SHA-256 of `data`.
std::string Sha256Hex(absl::string_view data);
// Hex SHA-256 of the bytes of the file at `path`.
absl::StatusOr<std::string> Sha256File(const std::string& path);

}  // namespace ibgraphrag::kgstore::import_

#endif  // IBGRAPHRAG_SERVICES_KGSTORE_IMPORT_SHA256_H_
