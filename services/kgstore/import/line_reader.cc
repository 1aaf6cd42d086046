#include "services/kgstore/import/line_reader.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace ibgraphrag::kgstore::import_ {
namespace {

constexpr size_t kChunkBytes = 1 << 18;

}  // namespace

struct LineReader::Inflater {
  z_stream stream{};
  bool initialised = false;
  ~Inflater() {
    if (initialised) inflateEnd(&stream);
  }
};

absl::StatusOr<std::unique_ptr<LineReader>> LineReader::Open(const std::string& path) {
  FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    return absl::NotFoundError(absl::StrCat(path, ": cannot open: ", std::strerror(errno)));
  }
  std::unique_ptr<LineReader> reader(new LineReader(path, file));
  // Sniff the gzip magic from the first raw chunk so a mis-named file still reads correctly.
  if (!reader->ReadRaw()) {
    if (!reader->status_.ok()) return reader->status_;
    return reader;  // empty file
  }
  const auto* magic = reinterpret_cast<const unsigned char*>(reader->raw_.data());
  if (reader->raw_end_ >= 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
    reader->is_gzip_ = true;
    reader->inflater_ = std::make_unique<Inflater>();
    if (inflateInit2(&reader->inflater_->stream, 15 + 32) != Z_OK) {
      return absl::InternalError(absl::StrCat(path, ": zlib inflateInit2 failed"));
    }
    reader->inflater_->initialised = true;
  } else {
    // Plain file: the sniffed chunk is already the first decoded data.
    reader->buffer_.assign(reader->raw_.begin(), reader->raw_.begin() + reader->raw_end_);
    reader->buffer_.resize(std::max(reader->buffer_.size(), kChunkBytes));
    reader->end_ = reader->raw_end_;
    reader->raw_begin_ = reader->raw_end_ = 0;
  }
  return reader;
}

LineReader::LineReader(std::string path, FILE* file)
    : path_(std::move(path)), file_(file), raw_(kChunkBytes), buffer_(kChunkBytes) {}

LineReader::~LineReader() {
  if (file_ != nullptr) std::fclose(file_);
}

bool LineReader::ReadRaw() {
  if (raw_eof_) return false;
  const size_t n = std::fread(raw_.data(), 1, raw_.size(), file_);
  if (n < raw_.size()) {
    if (std::ferror(file_)) {
      status_ = absl::DataLossError(absl::StrCat(path_, ": read error: ", std::strerror(errno)));
      raw_eof_ = true;
      return false;
    }
    raw_eof_ = true;
  }
  sha_.Update(raw_.data(), n);
  raw_begin_ = 0;
  raw_end_ = n;
  return n > 0;
}

bool LineReader::Fill() {
  if (!status_.ok() || finished_) return false;
  // Make room: keep the unread tail at the front, grow when one line fills the whole buffer.
  if (begin_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == buffer_.size()) buffer_.resize(buffer_.size() * 2);
  const size_t room = buffer_.size() - end_;
  if (!is_gzip_) {
    if (raw_eof_) return false;
    const size_t n = std::fread(buffer_.data() + end_, 1, room, file_);
    if (n < room) {
      if (std::ferror(file_)) {
        status_ = absl::DataLossError(absl::StrCat(path_, ": read error: ", std::strerror(errno)));
        return false;
      }
      raw_eof_ = true;
    }
    sha_.Update(buffer_.data() + end_, n);
    end_ += n;
    return n > 0;
  }
  z_stream& zs = inflater_->stream;
  while (true) {
    if (raw_begin_ == raw_end_) {
      if (!ReadRaw()) {
        if (!status_.ok()) return false;
        if (!stream_end_) {
          status_ = absl::DataLossError(absl::StrCat(path_, ": truncated gzip data"));
        }
        return false;
      }
    }
    if (stream_end_) {
      // Another gzip member follows (concatenated .gz files are valid gzip).
      if (inflateReset(&zs) != Z_OK) {
        status_ = absl::InternalError(absl::StrCat(path_, ": zlib inflateReset failed"));
        return false;
      }
      stream_end_ = false;
    }
    zs.next_in = reinterpret_cast<Bytef*>(raw_.data() + raw_begin_);
    zs.avail_in = static_cast<uInt>(raw_end_ - raw_begin_);
    zs.next_out = reinterpret_cast<Bytef*>(buffer_.data() + end_);
    zs.avail_out = static_cast<uInt>(room);
    const int rc = inflate(&zs, Z_NO_FLUSH);
    raw_begin_ = raw_end_ - zs.avail_in;
    const size_t produced = room - zs.avail_out;
    end_ += produced;
    if (rc == Z_STREAM_END) {
      stream_end_ = true;
    } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
      status_ = absl::DataLossError(
          absl::StrCat(path_, ": corrupt gzip data (zlib error ", rc,
                       zs.msg != nullptr ? absl::StrCat(": ", zs.msg) : "", ")"));
      return false;
    }
    if (produced > 0) return true;
    if (stream_end_ && raw_begin_ == raw_end_ && raw_eof_) return false;
  }
}

bool LineReader::Next(absl::string_view* line) {
  size_t scan_from = begin_;
  while (true) {
    const void* newline = std::memchr(buffer_.data() + scan_from, '\n', end_ - scan_from);
    if (newline != nullptr) {
      const size_t at = static_cast<const char*>(newline) - buffer_.data();
      size_t stop = at;
      if (stop > begin_ && buffer_[stop - 1] == '\r') --stop;
      *line = absl::string_view(buffer_.data() + begin_, stop - begin_);
      begin_ = at + 1;
      ++line_number_;
      return true;
    }
    const size_t scanned = end_ - begin_;
    if (!Fill()) break;
    scan_from = begin_ + scanned;
  }
  if (!status_.ok() || begin_ == end_) return false;
  // Last line without a trailing newline.
  size_t stop = end_;
  if (buffer_[stop - 1] == '\r') --stop;
  *line = absl::string_view(buffer_.data() + begin_, stop - begin_);
  begin_ = end_;
  ++line_number_;
  return true;
}

absl::StatusOr<std::string> LineReader::FinishSha256() {
  if (!finished_) {
    finished_ = true;
    begin_ = end_ = 0;
    while (ReadRaw()) {
    }
    if (!status_.ok()) return status_;
  }
  return sha_.HexDigest();
}

}  // namespace ibgraphrag::kgstore::import_
