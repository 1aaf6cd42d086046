// Structured JSON-lines logging to stderr: one object per line, e.g.
//   {"ts":"2026-01-02T03:04:05.678Z","level":"info","msg":"rpc","service":"...","code":"OK"}
// Thread-safe; each line is written with a single write so lines from concurrent threads never
// interleave. Question text and other payloads are patient data: they go only through
// LogPayload, which is silent unless the log_payloads debug switch is on.
#ifndef IBGRAPHRAG_COMMON_LOGGING_H_
#define IBGRAPHRAG_COMMON_LOGGING_H_

#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "absl/types/variant.h"

namespace google::protobuf {
class Message;
}  // namespace google::protobuf

namespace ibgraphrag::common {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

// "debug", "info", "warning", "error".
absl::string_view LogLevelName(LogLevel level);
// Accepts the names above (any case) and "warn"; INVALID_ARGUMENT otherwise.
absl::StatusOr<LogLevel> ParseLogLevel(absl::string_view name);

// Lines below the minimum level are dropped before they are formatted. Default kInfo.
void SetMinLogLevel(LogLevel level);
LogLevel MinLogLevel();
bool LogLevelEnabled(LogLevel level);

// The global payload-logging debug switch (default off). ServerRunner sets it from
// Options::log_payloads.
void SetLogPayloads(bool enabled);
bool LogPayloadsEnabled();

// One JSON value of a log field. Implicit so call sites read naturally:
//   LogInfo("snapshot loaded", {{"path", path}, {"triples", n}, {"seconds", 1.5}});
class LogValue {
 public:
  LogValue(absl::string_view value) : value_(std::string(value)) {}  // NOLINT
  LogValue(const char* value) : value_(std::string(value)) {}        // NOLINT
  LogValue(const std::string& value) : value_(value) {}              // NOLINT
  LogValue(std::string&& value) : value_(std::move(value)) {}        // NOLINT
  LogValue(bool value) : value_(value) {}                            // NOLINT
  LogValue(double value) : value_(value) {}                          // NOLINT
  template <typename T,
            std::enable_if_t<
                std::is_integral_v<T> && !std::is_same_v<T, bool> && std::is_signed_v<T>, int> = 0>
  LogValue(T value) : value_(static_cast<int64_t>(value)) {}  // NOLINT
  template <typename T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool> &&
                                             std::is_unsigned_v<T>,
                                         int> = 0>
  LogValue(T value) : value_(static_cast<uint64_t>(value)) {}  // NOLINT

  using Variant = absl::variant<std::string, int64_t, uint64_t, double, bool>;
  const Variant& value() const { return value_; }

 private:
  Variant value_;
};

using LogField = std::pair<absl::string_view, LogValue>;

// Writes one line with "ts", "level", "msg" and then `fields` in order. Field names "ts", "level"
// and "msg" are reserved and overwritten. Never throws; invalid UTF-8 is replaced.
void Log(LogLevel level, absl::string_view message, absl::Span<const LogField> fields = {});
inline void LogDebug(absl::string_view message, absl::Span<const LogField> fields = {}) {
  Log(LogLevel::kDebug, message, fields);
}
inline void LogInfo(absl::string_view message, absl::Span<const LogField> fields = {}) {
  Log(LogLevel::kInfo, message, fields);
}
inline void LogWarning(absl::string_view message, absl::Span<const LogField> fields = {}) {
  Log(LogLevel::kWarning, message, fields);
}
inline void LogError(absl::string_view message, absl::Span<const LogField> fields = {}) {
  Log(LogLevel::kError, message, fields);
}

// Logs at debug level with "payload" = the message in protobuf short text form, but only when
// LogPayloadsEnabled(); otherwise does nothing (and formats nothing). Callers pass the request id
// so the payload can be joined with the access-log line.
void LogPayload(absl::string_view message, absl::string_view request_id,
                const google::protobuf::Message& payload);
// Same for payload text the caller already has (e.g. an LLM prompt).
void LogPayload(absl::string_view message, absl::string_view request_id, absl::string_view payload);

// Formats a line without writing it (no trailing newline). Exposed for tests and for code that
// ships lines elsewhere.
std::string FormatLogLine(LogLevel level, absl::string_view message,
                          absl::Span<const LogField> fields);

// Replaces where lines go (default: stderr). The sink receives one complete line without the
// trailing newline and is called under the logger's lock, so it must not log. Pass nullptr to
// restore stderr. Meant for tests that assert on log output.
using LogSink = std::function<void(absl::string_view line)>;
void SetLogSink(LogSink sink);

}  // namespace ibgraphrag::common

#endif  // IBGRAPHRAG_COMMON_LOGGING_H_
