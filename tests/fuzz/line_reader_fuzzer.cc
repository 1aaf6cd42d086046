// The importers' line reader (services/kgstore/import/line_reader.h) on plain and gzip files.
// The first byte picks the mode: 0 the bytes as they are (plain, or gzip when they start with
// its magic), 1 the bytes gzip-compressed (must read exactly like mode 0 on plain bytes),
// 2 compressed and then truncated (must stop with DATA_LOSS or read a prefix, never crash).
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/file_util.h"
#include "services/kgstore/import/line_reader.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using ibgraphrag::fuzz::Check;
using ibgraphrag::kgstore::import_::LineReader;

std::string Gzip(absl::string_view bytes) {
  z_stream stream{};
  Check(deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) ==
            Z_OK,
        "deflateInit2");
  std::string out(deflateBound(&stream, bytes.size()) + 32, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  stream.avail_in = static_cast<uInt>(bytes.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  Check(deflate(&stream, Z_FINISH) == Z_STREAM_END, "deflate");
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

struct Reading {
  std::vector<std::string> lines;
  absl::Status status;
};

Reading ReadAll(const std::string& bytes) {
  const std::string& path = ibgraphrag::fuzz::WriteScratchFile(
      reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "lines");
  auto reader = LineReader::Open(path);
  ibgraphrag::fuzz::CheckOk(reader.status(), "LineReader::Open of a written file");
  Reading reading;
  absl::string_view line;
  while ((*reader)->Next(&line)) {
    Check(line.find('\n') == absl::string_view::npos, "a line holds a newline");
    reading.lines.emplace_back(line);
    Check((*reader)->line_number() == static_cast<int64_t>(reading.lines.size()),
          "line_number() does not count the lines");
  }
  reading.status = (*reader)->status();
  // The manifest's SHA-256 is of the bytes on disk, however far reading got.
  auto reopened = LineReader::Open(path);
  auto sha = (*reopened)->FinishSha256();
  ibgraphrag::fuzz::CheckOk(sha.status(), "FinishSha256");
  Check(*sha == ibgraphrag::common::Sha256Hex(bytes), "FinishSha256 is not the file's SHA-256");
  return reading;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  const int mode = data[0] % 3;
  if (mode == 0) {
    const Reading reading = ReadAll(bytes);
    if (!reading.status.ok()) {
      Check(reading.status.code() == absl::StatusCode::kDataLoss,
            "a bad input stops without DATA_LOSS");
    }
    return 0;
  }
  const bool gzip_magic = bytes.size() >= 2 && bytes[0] == '\x1f' && bytes[1] == '\x8b';
  std::string compressed = Gzip(bytes);
  if (mode == 1) {
    const Reading packed = ReadAll(compressed);
    ibgraphrag::fuzz::CheckOk(packed.status, "reading a well-formed gzip file");
    if (!gzip_magic) {
      const Reading plain = ReadAll(bytes);
      Check(plain.status.ok() && plain.lines == packed.lines,
            "a gzip file reads differently from its plain bytes");
    }
    return 0;
  }
  compressed.resize(compressed.size() * data[size - 1] / 256);
  const Reading truncated = ReadAll(compressed);
  Check(truncated.status.ok() || truncated.status.code() == absl::StatusCode::kDataLoss,
        "a truncated gzip file stops without DATA_LOSS");
  return 0;
}
