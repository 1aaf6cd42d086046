#include "common/config.h"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"

namespace ibgraphrag::common {
namespace {

using ibgraphrag::config::v1::ServerConfig;

constexpr double kMaxDrainSeconds = 3600;
constexpr int kMaxThreads = 65536;
constexpr double kMaxConnectionAgeSeconds = 86400;
constexpr size_t kMaxServiceNameBytes = 64;

// Collects the parser's errors as "<source>:<line>:<column>: <message>" (1-based positions).
class CollectingErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  CollectingErrorCollector(std::string source, absl::string_view text)
      : source_(std::move(source)), lines_(absl::StrSplit(text, '\n')) {}

  // Value errors ("Expected integer, got: \"abc\"") do not say which field they are about, so
  // the offending line is quoted: it starts with the field name.
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    std::string error = absl::StrCat(source_, ":", line + 1, ":", column + 1, ": ", message);
    if (line >= 0 && static_cast<size_t>(line) < lines_.size()) {
      absl::string_view quoted = absl::StripAsciiWhitespace(lines_[line]);
      if (quoted.size() > kMaxQuotedChars) quoted = quoted.substr(0, kMaxQuotedChars);
      if (!quoted.empty()) absl::StrAppend(&error, " (at `", quoted, "`)");
    }
    errors_.push_back(std::move(error));
  }
  void AddWarning(int line, google::protobuf::io::ColumnNumber column,
                  const std::string& message) override {
    // Warnings (e.g. deprecated fields) are not fatal but are worth surfacing.
    LogWarning("config warning",
               {{"file", source_}, {"line", line + 1}, {"column", column + 1}, {"what", message}});
  }

  const std::vector<std::string>& errors() const { return errors_; }

 private:
  static constexpr size_t kMaxQuotedChars = 120;

  const std::string source_;
  const std::vector<absl::string_view> lines_;
  std::vector<std::string> errors_;
};

absl::Status CheckReadableFile(absl::string_view field, const std::string& path) {
  if (::access(path.c_str(), R_OK) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": \"", path, "\" is not a readable file: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status CheckSeconds(absl::string_view field, double value, double max) {
  if (!std::isfinite(value) || value < 0 || value > max) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": ", value, " is outside [0, ", max, "] seconds"));
  }
  return absl::OkStatus();
}

// Looks up prefix + suffix; returns nullptr when unset or empty.
const char* GetEnv(absl::string_view prefix, absl::string_view suffix, std::string* name) {
  *name = absl::StrCat(prefix, suffix);
  const char* value = std::getenv(name->c_str());
  return (value == nullptr || *value == '\0') ? nullptr : value;
}

absl::Status EnvInt(absl::string_view prefix, absl::string_view suffix,
                    const std::function<void(int32_t)>& set) {
  std::string name;
  const char* value = GetEnv(prefix, suffix, &name);
  if (value == nullptr) return absl::OkStatus();
  int32_t parsed = 0;
  if (!absl::SimpleAtoi(value, &parsed)) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": \"", value, "\" is not an integer"));
  }
  set(parsed);
  return absl::OkStatus();
}

absl::Status EnvBool(absl::string_view prefix, absl::string_view suffix,
                     const std::function<void(bool)>& set) {
  std::string name;
  const char* value = GetEnv(prefix, suffix, &name);
  if (value == nullptr) return absl::OkStatus();
  bool parsed = false;
  if (!absl::SimpleAtob(value, &parsed)) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": \"", value, "\" is not a boolean (true/false/1/0)"));
  }
  set(parsed);
  return absl::OkStatus();
}

void EnvString(absl::string_view prefix, absl::string_view suffix,
               const std::function<void(std::string)>& set) {
  std::string name;
  const char* value = GetEnv(prefix, suffix, &name);
  if (value != nullptr) set(value);
}

absl::StatusOr<LogLevel> ToLogLevel(ibgraphrag::config::v1::LogLevel level) {
  switch (level) {
    case ibgraphrag::config::v1::LOG_LEVEL_DEBUG:
      return LogLevel::kDebug;
    case ibgraphrag::config::v1::LOG_LEVEL_INFO:
      return LogLevel::kInfo;
    case ibgraphrag::config::v1::LOG_LEVEL_WARNING:
      return LogLevel::kWarning;
    case ibgraphrag::config::v1::LOG_LEVEL_ERROR:
      return LogLevel::kError;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("log_level: ", static_cast<int>(level), " is not a known level"));
  }
}

}  // namespace

absl::Status ParseTextProto(absl::string_view text, absl::string_view source_name,
                            google::protobuf::Message* message) {
  message->Clear();
  const std::string text_copy(text);
  CollectingErrorCollector errors(std::string(source_name), text_copy);
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  const bool ok = parser.ParseFromString(text_copy, message);
  if (!ok || !errors.errors().empty()) {
    if (errors.errors().empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(source_name, ": not a valid ", message->GetTypeName(), " text proto"));
    }
    return absl::InvalidArgumentError(absl::StrJoin(errors.errors(), "; "));
  }
  return absl::OkStatus();
}

absl::Status ParseTextProtoFile(const std::string& path, google::protobuf::Message* message) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int error = errno;
    const std::string what = absl::StrCat("config file \"", path, "\": ", std::strerror(error));
    return error == ENOENT ? absl::NotFoundError(what) : absl::InvalidArgumentError(what);
  }
  std::ostringstream contents;
  contents << in.rdbuf();
  return ParseTextProto(contents.str(), path, message);
}

absl::Status ApplyEnvOverrides(ServerConfig* config, absl::string_view prefix) {
  IBGR_RETURN_IF_ERROR(EnvInt(prefix, "PORT", [&](int32_t v) { config->set_port(v); }));
  IBGR_RETURN_IF_ERROR(
      EnvInt(prefix, "METRICS_PORT", [&](int32_t v) { config->set_metrics_port(v); }));
  EnvString(prefix, "LISTEN_HOST", [&](std::string v) { config->set_listen_host(std::move(v)); });
  EnvString(prefix, "TLS_CERT",
            [&](std::string v) { config->mutable_tls()->set_cert_file(std::move(v)); });
  EnvString(prefix, "TLS_KEY",
            [&](std::string v) { config->mutable_tls()->set_key_file(std::move(v)); });
  EnvString(prefix, "TLS_CLIENT_CA",
            [&](std::string v) { config->mutable_tls()->set_client_ca_file(std::move(v)); });
  IBGR_RETURN_IF_ERROR(EnvBool(prefix, "TLS_REQUIRE_CLIENT_CERT",
                               [&](bool v) { config->mutable_tls()->set_require_client_cert(v); }));
  IBGR_RETURN_IF_ERROR(
      EnvBool(prefix, "LOG_PAYLOADS", [&](bool v) { config->set_log_payloads(v); }));
  std::string name;
  if (const char* value = GetEnv(prefix, "LOG_LEVEL", &name); value != nullptr) {
    auto level = ParseLogLevel(value);
    if (!level.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": \"", value, "\" is not one of debug, info, warning, error"));
    }
    static constexpr ibgraphrag::config::v1::LogLevel kByLevel[] = {
        ibgraphrag::config::v1::LOG_LEVEL_DEBUG, ibgraphrag::config::v1::LOG_LEVEL_INFO,
        ibgraphrag::config::v1::LOG_LEVEL_WARNING, ibgraphrag::config::v1::LOG_LEVEL_ERROR};
    config->set_log_level(kByLevel[static_cast<int>(*level)]);
  }
  return absl::OkStatus();
}

absl::Status ValidateServerConfig(const ServerConfig& config) {
  if (config.service_name().size() > kMaxServiceNameBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("service_name: longer than ", kMaxServiceNameBytes, " bytes"));
  }
  if (config.has_port() && (config.port() < 0 || config.port() > 65535)) {
    return absl::InvalidArgumentError(
        absl::StrCat("port: ", config.port(), " is outside [0, 65535]"));
  }
  if (config.has_metrics_port() && (config.metrics_port() < -1 || config.metrics_port() > 65535)) {
    return absl::InvalidArgumentError(
        absl::StrCat("metrics_port: ", config.metrics_port(), " is outside [-1, 65535]"));
  }
  const auto& tls = config.tls();
  if (!tls.cert_file().empty() && tls.key_file().empty()) {
    return absl::InvalidArgumentError("tls.key_file: required when tls.cert_file is set");
  }
  if (tls.cert_file().empty() && !tls.key_file().empty()) {
    return absl::InvalidArgumentError("tls.cert_file: required when tls.key_file is set");
  }
  if (tls.require_client_cert() && tls.client_ca_file().empty()) {
    return absl::InvalidArgumentError(
        "tls.client_ca_file: required when tls.require_client_cert is true");
  }
  if (!tls.client_ca_file().empty() && tls.cert_file().empty()) {
    return absl::InvalidArgumentError(
        "tls.cert_file: required when tls.client_ca_file is set (client certificates are "
        "verified only over TLS)");
  }
  if (!tls.cert_file().empty()) {
    IBGR_RETURN_IF_ERROR(CheckReadableFile("tls.cert_file", tls.cert_file()));
    IBGR_RETURN_IF_ERROR(CheckReadableFile("tls.key_file", tls.key_file()));
  }
  if (!tls.client_ca_file().empty()) {
    IBGR_RETURN_IF_ERROR(CheckReadableFile("tls.client_ca_file", tls.client_ca_file()));
  }
  if (config.has_drain_deadline_seconds()) {
    IBGR_RETURN_IF_ERROR(
        CheckSeconds("drain_deadline_seconds", config.drain_deadline_seconds(), kMaxDrainSeconds));
  }
  if (config.has_termination_grace_seconds()) {
    IBGR_RETURN_IF_ERROR(CheckSeconds("termination_grace_seconds",
                                      config.termination_grace_seconds(), kMaxDrainSeconds));
  }
  if (config.has_max_receive_message_bytes() && config.max_receive_message_bytes() < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_receive_message_bytes: ", config.max_receive_message_bytes(), " must be >= 1"));
  }
  if (config.has_max_send_message_bytes() && config.max_send_message_bytes() < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_send_message_bytes: ", config.max_send_message_bytes(), " must be >= 1"));
  }
  if (config.max_threads() < 0 || config.max_threads() > kMaxThreads) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_threads: ", config.max_threads(), " is outside [0, ", kMaxThreads, "]"));
  }
  IBGR_RETURN_IF_ERROR(CheckSeconds("max_connection_age_seconds",
                                    config.max_connection_age_seconds(), kMaxConnectionAgeSeconds));
  if (config.log_level() != ibgraphrag::config::v1::LOG_LEVEL_UNSPECIFIED) {
    IBGR_RETURN_IF_ERROR(ToLogLevel(config.log_level()).status());
  }
  return absl::OkStatus();
}

absl::StatusOr<ServerRunner::Options> OptionsFromConfig(const ServerConfig& config,
                                                        ServerRunner::Options defaults) {
  IBGR_RETURN_IF_ERROR(ValidateServerConfig(config));
  ServerRunner::Options options = std::move(defaults);
  if (!config.service_name().empty()) options.service_name = config.service_name();
  if (!config.listen_host().empty()) options.listen_host = config.listen_host();
  if (config.has_port()) options.port = config.port();
  if (config.has_metrics_port()) options.metrics_port = config.metrics_port();
  if (!config.tls().cert_file().empty()) {
    options.tls.cert_path = config.tls().cert_file();
    options.tls.key_path = config.tls().key_file();
    options.tls.client_ca_path = config.tls().client_ca_file();
    options.tls.require_client_cert = config.tls().require_client_cert();
  }
  if (config.has_drain_deadline_seconds()) {
    options.drain_deadline = absl::Seconds(config.drain_deadline_seconds());
  }
  if (config.has_termination_grace_seconds()) {
    options.termination_grace_period = absl::Seconds(config.termination_grace_seconds());
  }
  if (config.has_max_receive_message_bytes()) {
    options.max_receive_message_bytes = config.max_receive_message_bytes();
  }
  if (config.has_max_send_message_bytes()) {
    options.max_send_message_bytes = config.max_send_message_bytes();
  }
  if (config.max_threads() > 0) options.max_threads = config.max_threads();
  if (config.max_connection_age_seconds() > 0) {
    options.max_connection_age = absl::Seconds(config.max_connection_age_seconds());
  }
  if (config.log_payloads()) options.log_payloads = true;
  return options;
}

absl::Status ApplyLoggingConfig(const ServerConfig& config) {
  if (config.log_level() != ibgraphrag::config::v1::LOG_LEVEL_UNSPECIFIED) {
    IBGR_ASSIGN_OR_RETURN(LogLevel level, ToLogLevel(config.log_level()));
    SetMinLogLevel(level);
  }
  if (config.log_payloads()) SetLogPayloads(true);
  return absl::OkStatus();
}

}  // namespace ibgraphrag::common
