// Memory-mapped float32 embedding tables: the retriever's entity and relation text embeddings.
//
// File layout (little-endian): a 64-byte header, then rows x dim float32 values, row-major.
//   bytes 0..7   magic "IBGREMB1"
//   bytes 8..11  uint32 format version (1)
//   bytes 12..15 uint32 dim
//   bytes 16..23 uint64 rows
//   bytes 24..63 zero
// The header keeps the data 64-byte aligned so rows can be read in place by SIMD loops.
#ifndef IBGRAPHRAG_SERVICES_RETRIEVER_EMBEDDING_TABLE_H_
#define IBGRAPHRAG_SERVICES_RETRIEVER_EMBEDDING_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace ibgraphrag::retriever {

inline constexpr size_t kEmbeddingHeaderBytes = 64;

class EmbeddingTable {
 public:
  // Maps `path` read-only. NOT_FOUND when missing; DATA_LOSS naming the file when the header
  // is wrong or the size does not match rows x dim.
  static absl::StatusOr<std::unique_ptr<EmbeddingTable>> Open(const std::string& path);
  // A table owning `values` (rows x dim), for tests and freshly built artifacts.
  static std::unique_ptr<EmbeddingTable> FromVector(std::vector<float> values, int dim);

  ~EmbeddingTable();
  EmbeddingTable(const EmbeddingTable&) = delete;
  EmbeddingTable& operator=(const EmbeddingTable&) = delete;

  int64_t rows() const { return rows_; }
  int dim() const { return dim_; }
  const float* data() const { return data_; }
  const float* row(int64_t i) const { return data_ + static_cast<size_t>(i) * dim_; }

 private:
  EmbeddingTable() = default;
  int64_t rows_ = 0;
  int dim_ = 0;
  const float* data_ = nullptr;
  void* mapping_ = nullptr;
  size_t mapping_bytes_ = 0;
  std::vector<float> owned_;
};

// Writes rows x dim values to `path` atomically (temp file + rename).
absl::Status WriteEmbeddingTable(const std::string& path, absl::Span<const float> values, int dim);

}  // namespace ibgraphrag::retriever

#endif  // IBGRAPHRAG_SERVICES_RETRIEVER_EMBEDDING_TABLE_H_
