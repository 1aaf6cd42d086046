// Streaming line reader for the importers: plain or gzip files (detected by magic bytes, not by
// name), CRLF tolerant, with line numbers for `file:line: reason` messages and the SHA-256 of the
// bytes on disk for the snapshot manifest.
#ifndef IBGRAPHRAG_SERVICES_KGSTORE_IMPORT_LINE_READER_H_
#define IBGRAPHRAG_SERVICES_KGSTORE_IMPORT_LINE_READER_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/file_util.h"

namespace ibgraphrag::kgstore::import_ {

class LineReader {
 public:
  // Opens `path`; NOT_FOUND when it cannot be opened.
  static absl::StatusOr<std::unique_ptr<LineReader>> Open(const std::string& path);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // Sets `line` to the next line without its "\n" / "\r\n". Returns false at the end of the input
  // or on an I/O or gzip error (status() tells which). `line` stays valid until the next call.
  bool Next(absl::string_view* line);
  // OK, or why reading stopped early (DATA_LOSS for corrupt or truncated gzip data).
  const absl::Status& status() const { return status_; }
  // 1-based number of the line last returned by Next().
  int64_t line_number() const { return line_number_; }
  const std::string& path() const { return path_; }
  bool is_gzip() const { return is_gzip_; }
  // Reads whatever is left of the file and returns the hex SHA-256 of all its bytes as stored on
  // disk (the compressed bytes for gzip). Lines not read yet are dropped: Next() returns false
  // afterwards.
  absl::StatusOr<std::string> FinishSha256();

 private:
  LineReader(std::string path, FILE* file);
  // Appends more decoded bytes after end_; false when nothing more can be read.
  bool Fill();
  bool ReadRaw();

  std::string path_;
  FILE* file_ = nullptr;
  bool is_gzip_ = false;
  bool raw_eof_ = false;
  bool stream_end_ = false;  // the current gzip member ended
  bool finished_ = false;
  absl::Status status_;
  int64_t line_number_ = 0;
  common::Sha256Hasher sha_;
  std::vector<char> raw_;  // compressed input (gzip only)
  size_t raw_begin_ = 0;
  size_t raw_end_ = 0;
  std::vector<char> buffer_;  // decoded bytes; lines are views into it
  size_t begin_ = 0;
  size_t end_ = 0;
  struct Inflater;
  std::unique_ptr<Inflater> inflater_;
};

}  // namespace ibgraphrag::kgstore::import_

#endif  // IBGRAPHRAG_SERVICES_KGSTORE_IMPORT_LINE_READER_H_
