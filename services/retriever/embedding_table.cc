#include "services/retriever/embedding_table.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"

namespace ibgraphrag::retriever {
namespace {

constexpr char kMagic[8] = {'I', 'B', 'G', 'R', 'E', 'M', 'B', '1'};
constexpr uint32_t kFormatVersion = 1;

}  // namespace

EmbeddingTable::~EmbeddingTable() {
  if (mapping_ != nullptr) munmap(mapping_, mapping_bytes_);
}

std::unique_ptr<EmbeddingTable> EmbeddingTable::FromVector(std::vector<float> values, int dim) {
  std::unique_ptr<EmbeddingTable> t(new EmbeddingTable());
  t->dim_ = dim;
  t->rows_ = dim > 0 ? static_cast<int64_t>(values.size() / dim) : 0;
  t->owned_ = std::move(values);
  t->data_ = t->owned_.data();
  return t;
}

absl::StatusOr<std::unique_ptr<EmbeddingTable>> EmbeddingTable::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return absl::NotFoundError(absl::StrCat(path, ": no such file"));
    return absl::UnavailableError(absl::StrCat(path, ": ", std::strerror(errno)));
  }
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    ::close(fd);
    return absl::UnavailableError(absl::StrCat(path, ": fstat: ", std::strerror(errno)));
  }
  const size_t bytes = static_cast<size_t>(st.st_size);
  if (bytes < kEmbeddingHeaderBytes) {
    ::close(fd);
    return absl::DataLossError(absl::StrCat(path, ": ", bytes, " bytes, shorter than the header"));
  }
  void* map = mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) {
    return absl::UnavailableError(absl::StrCat(path, ": mmap: ", std::strerror(errno)));
  }
  std::unique_ptr<EmbeddingTable> t(new EmbeddingTable());
  t->mapping_ = map;
  t->mapping_bytes_ = bytes;
  const char* p = static_cast<const char*>(map);
  uint32_t version = 0, dim = 0;
  uint64_t rows = 0;
  std::memcpy(&version, p + 8, 4);
  std::memcpy(&dim, p + 12, 4);
  std::memcpy(&rows, p + 16, 8);
  if (std::memcmp(p, kMagic, sizeof(kMagic)) != 0 || version != kFormatVersion) {
    return absl::DataLossError(
        absl::StrCat(path, ": not an embedding table (bad magic or format version)"));
  }
  if (dim == 0 || bytes != kEmbeddingHeaderBytes + rows * dim * sizeof(float)) {
    return absl::DataLossError(absl::StrCat(path, ": size ", bytes, " does not match ", rows,
                                            " rows x ", dim, " floats (truncated?)"));
  }
  t->dim_ = static_cast<int>(dim);
  t->rows_ = static_cast<int64_t>(rows);
  t->data_ = reinterpret_cast<const float*>(p + kEmbeddingHeaderBytes);
  return t;
}

absl::Status WriteEmbeddingTable(const std::string& path, absl::Span<const float> values, int dim) {
  if (dim <= 0 || values.size() % dim != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("embedding table ", path, ": ", values.size(), " values, not rows x ", dim));
  }
  std::string contents(kEmbeddingHeaderBytes, '\0');
  std::memcpy(contents.data(), kMagic, sizeof(kMagic));
  const uint32_t version = kFormatVersion, d = static_cast<uint32_t>(dim);
  const uint64_t rows = values.size() / dim;
  std::memcpy(contents.data() + 8, &version, 4);
  std::memcpy(contents.data() + 12, &d, 4);
  std::memcpy(contents.data() + 16, &rows, 8);
  contents.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  return common::WriteStringToFileAtomic(path, contents);
}

}  // namespace ibgraphrag::retriever
