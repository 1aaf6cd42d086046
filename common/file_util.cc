#include "common/file_util.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace ibgraphrag::common {
namespace {

constexpr size_t kReadChunkBytes = 1 << 16;

absl::Status ErrnoError(int error_number, absl::string_view what, absl::string_view path) {
  return absl::ErrnoToStatus(error_number, absl::StrCat(what, " ", path));
}

// Closes the descriptor when it goes out of scope (unless released).
class ScopedFd {
 public:
  explicit ScopedFd(int fd) : fd_(fd) {}
  ~ScopedFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  int get() const { return fd_; }
  // Closes now and reports the close error, which for a written file may be the write error.
  int Close() {
    const int rc = ::close(fd_);
    fd_ = -1;
    return rc;
  }

 private:
  int fd_;
};

absl::StatusOr<int> OpenForReading(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(errno, "cannot open", path);
  return fd;
}

// Calls `sink(chunk)` for successive chunks of the file at `path`.
template <typename Sink>
absl::Status ForEachChunk(const std::string& path, Sink sink) {
  IBGR_ASSIGN_OR_RETURN(int raw_fd, OpenForReading(path));
  ScopedFd fd(raw_fd);
  std::vector<char> buffer(kReadChunkBytes);
  while (true) {
    const ssize_t n = ::read(fd.get(), buffer.data(), buffer.size());
    if (n == 0) return absl::OkStatus();
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, "cannot read", path);
    }
    sink(absl::string_view(buffer.data(), static_cast<size_t>(n)));
  }
}

absl::Status WriteAll(int fd, absl::string_view data, const std::string& path) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, "cannot write", path);
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

std::string ParentDirectory(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// A name beside `path` that no other writer (thread or process) picks at the same time.
std::string TempNameFor(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  return absl::StrCat(path, ".tmp.", ::getpid(), ".", counter.fetch_add(1));
}

// Writes `data` to the new file `temp_path` and makes it durable.
absl::Status WriteDurableFile(const std::string& temp_path, absl::string_view data) {
  // O_EXCL: never write through a file someone else created; 0666 lets the umask decide.
  ScopedFd fd(::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666));
  if (fd.get() < 0) return ErrnoError(errno, "cannot create", temp_path);
  IBGR_RETURN_IF_ERROR(WriteAll(fd.get(), data, temp_path));
  if (::fsync(fd.get()) != 0) return ErrnoError(errno, "cannot fsync", temp_path);
  if (fd.Close() != 0) return ErrnoError(errno, "cannot close", temp_path);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> ReadFileToString(const std::string& path) {
  std::string contents;
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
    contents.reserve(static_cast<size_t>(st.st_size));
  }
  IBGR_RETURN_IF_ERROR(ForEachChunk(
      path, [&contents](absl::string_view chunk) { contents.append(chunk.data(), chunk.size()); }));
  return contents;
}

absl::StatusOr<std::string> ReadFileNamedByField(absl::string_view field, const std::string& path) {
  absl::StatusOr<std::string> contents = ReadFileToString(path);
  if (!contents.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": ", contents.status().message()));
  }
  return contents;
}

absl::Status WriteStringToFileAtomic(const std::string& path, absl::string_view data) {
  const std::string temp_path = TempNameFor(path);
  absl::Status status = WriteDurableFile(temp_path, data);
  if (status.ok() && ::rename(temp_path.c_str(), path.c_str()) != 0) {
    status = ErrnoError(errno, absl::StrCat("cannot rename ", temp_path, " to"), path);
  }
  if (!status.ok()) {
    ::unlink(temp_path.c_str());
    return status;
  }
  return FsyncDirectory(ParentDirectory(path));
}

absl::Status FsyncDirectory(const std::string& dir) {
  ScopedFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) return ErrnoError(errno, "cannot open folder", dir);
  if (::fsync(fd.get()) != 0) return ErrnoError(errno, "cannot fsync folder", dir);
  return absl::OkStatus();
}

struct Sha256Hasher::Context {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  ~Context() { EVP_MD_CTX_free(ctx); }
};

Sha256Hasher::Sha256Hasher() : context_(std::make_unique<Context>()) {
  EVP_DigestInit_ex(context_->ctx, EVP_sha256(), nullptr);
}

Sha256Hasher::~Sha256Hasher() = default;

Sha256Hasher::Sha256Hasher(const Sha256Hasher& other) : context_(std::make_unique<Context>()) {
  EVP_MD_CTX_copy_ex(context_->ctx, other.context_->ctx);
}

Sha256Hasher& Sha256Hasher::operator=(const Sha256Hasher& other) {
  if (this != &other) EVP_MD_CTX_copy_ex(context_->ctx, other.context_->ctx);
  return *this;
}

void Sha256Hasher::Update(const void* data, size_t size) {
  EVP_DigestUpdate(context_->ctx, data, size);
}

Sha256Digest Sha256Hasher::Digest() const {
  // Finish a copy so the running state stays open for more Updates.
  Sha256Hasher copy(*this);
  Sha256Digest digest;
  unsigned int length = 0;
  EVP_DigestFinal_ex(copy.context_->ctx, digest.data(), &length);
  return digest;
}

std::string DigestToHex(const Sha256Digest& digest) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex(2 * digest.size(), '0');
  for (size_t i = 0; i < digest.size(); ++i) {
    hex[2 * i] = kHex[digest[i] >> 4];
    hex[2 * i + 1] = kHex[digest[i] & 0xf];
  }
  return hex;
}

Sha256Digest Sha256(absl::string_view data) {
  Sha256Digest digest;
  unsigned int length = 0;
  EVP_Digest(data.data(), data.size(), digest.data(), &length, EVP_sha256(), nullptr);
  return digest;
}

std::string Sha256Hex(absl::string_view data) { return DigestToHex(Sha256(data)); }

absl::StatusOr<std::string> Sha256HexOfFile(const std::string& path) {
  Sha256Hasher hasher;
  IBGR_RETURN_IF_ERROR(
      ForEachChunk(path, [&hasher](absl::string_view chunk) { hasher.Update(chunk); }));
  return hasher.HexDigest();
}

}  // namespace ibgraphrag::common
