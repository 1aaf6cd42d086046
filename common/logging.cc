#include "common/logging.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <mutex>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "google/protobuf/message.h"
#include "nlohmann/json.hpp"

namespace ibgraphrag::common {
namespace {

std::atomic<int> g_min_level{static_cast<int>(LogLevel::kInfo)};
std::atomic<bool> g_log_payloads{false};

// Guards the sink and serialises writes. Intentionally leaked so logging from static
// destructors and detached threads at exit stays safe.
std::mutex& SinkMutex() {
  static auto* mutex = new std::mutex;
  return *mutex;
}
LogSink& Sink() {
  static auto* sink = new LogSink;
  return *sink;
}

void WriteToStderr(const std::string& line_with_newline) {
  const char* data = line_with_newline.data();
  size_t left = line_with_newline.size();
  while (left > 0) {
    const ssize_t written = ::write(STDERR_FILENO, data, left);
    if (written < 0) {
      if (errno == EINTR) continue;
      return;  // Nowhere left to report a failing stderr.
    }
    data += written;
    left -= static_cast<size_t>(written);
  }
}

nlohmann::ordered_json ToJson(const LogValue& value) {
  return absl::visit([](const auto& v) { return nlohmann::ordered_json(v); }, value.value());
}

// Formats and writes one line; callers have already decided that it should be written.
void Emit(LogLevel level, absl::string_view message, absl::Span<const LogField> fields);

}  // namespace

absl::string_view LogLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarning:
      return "warning";
    case LogLevel::kError:
      return "error";
  }
  return "info";
}

absl::StatusOr<LogLevel> ParseLogLevel(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name);
  if (lower == "debug") return LogLevel::kDebug;
  if (lower == "info") return LogLevel::kInfo;
  if (lower == "warning" || lower == "warn") return LogLevel::kWarning;
  if (lower == "error") return LogLevel::kError;
  return absl::InvalidArgumentError(
      absl::StrCat("log level: \"", name, "\" is not one of debug, info, warning, error"));
}

void SetMinLogLevel(LogLevel level) {
  g_min_level.store(static_cast<int>(level), std::memory_order_relaxed);
}
LogLevel MinLogLevel() {
  return static_cast<LogLevel>(g_min_level.load(std::memory_order_relaxed));
}
bool LogLevelEnabled(LogLevel level) {
  return static_cast<int>(level) >= g_min_level.load(std::memory_order_relaxed);
}

void SetLogPayloads(bool enabled) { g_log_payloads.store(enabled, std::memory_order_relaxed); }
bool LogPayloadsEnabled() { return g_log_payloads.load(std::memory_order_relaxed); }

std::string FormatLogLine(LogLevel level, absl::string_view message,
                          absl::Span<const LogField> fields) {
  nlohmann::ordered_json line;
  line["ts"] = absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(), absl::UTCTimeZone());
  line["level"] = std::string(LogLevelName(level));
  line["msg"] = std::string(message);
  for (const auto& [key, value] : fields) {
    if (key == "ts" || key == "level" || key == "msg") continue;
    line[std::string(key)] = ToJson(value);
  }
  // `replace` turns invalid UTF-8 (e.g. from a peer's metadata) into U+FFFD instead of throwing.
  return line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

namespace {
void Emit(LogLevel level, absl::string_view message, absl::Span<const LogField> fields) {
  std::string line = FormatLogLine(level, message, fields);
  std::lock_guard<std::mutex> lock(SinkMutex());
  if (Sink()) {
    Sink()(line);
    return;
  }
  line.push_back('\n');
  WriteToStderr(line);
}
}  // namespace

void Log(LogLevel level, absl::string_view message, absl::Span<const LogField> fields) {
  if (!LogLevelEnabled(level)) return;
  Emit(level, message, fields);
}

void LogPayload(absl::string_view message, absl::string_view request_id,
                const google::protobuf::Message& payload) {
  if (!LogPayloadsEnabled()) return;
  LogPayload(message, request_id, payload.ShortDebugString());
}

void LogPayload(absl::string_view message, absl::string_view request_id,
                absl::string_view payload) {
  if (!LogPayloadsEnabled()) return;
  // The explicit switch is the gate; the level filter would otherwise hide what was asked for.
  Emit(LogLevel::kDebug, message, {{"request_id", request_id}, {"payload", payload}});
}

void SetLogSink(LogSink sink) {
  std::lock_guard<std::mutex> lock(SinkMutex());
  Sink() = std::move(sink);
}

}  // namespace ibgraphrag::common
