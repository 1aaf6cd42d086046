// The config files (common/config.h ParseTextProto) of every service message: ServerConfig (the
// `server` block all services share, and the whole file of kgstore, retriever and gateway),
// ReasonerConfig and AlignmentConfig, then their validation (ValidateServerConfig,
// ValidateReasonerConfig). The first byte picks the message. A file that parses must print
// back to text that parses to the same message.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/config.h"
#include "google/protobuf/message.h"
#include "google/protobuf/text_format.h"
#include "ibgraphrag/config/v1/alignment_config.pb.h"
#include "ibgraphrag/config/v1/reasoner_config.pb.h"
#include "ibgraphrag/config/v1/server_config.pb.h"
#include "services/reasoner/reasoner_config.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using ibgraphrag::fuzz::Check;
using ibgraphrag::fuzz::CheckOk;

bool ParseAndRoundTrip(absl::string_view text, google::protobuf::Message* message) {
  const absl::Status status = ibgraphrag::common::ParseTextProto(text, "fuzz.pbtxt", message);
  if (!status.ok()) {
    Check(status.code() == absl::StatusCode::kInvalidArgument &&
              status.message().find("fuzz.pbtxt") != absl::string_view::npos,
          "a bad config is not INVALID_ARGUMENT naming the file");
    return false;
  }
  std::string printed;
  Check(google::protobuf::TextFormat::PrintToString(*message, &printed), "config does not print");
  std::unique_ptr<google::protobuf::Message> again(message->New());
  CheckOk(ibgraphrag::common::ParseTextProto(printed, "printed", again.get()),
          "a printed config does not parse");
  // Compared as text, not with MessageDifferencer: NaN prints and parses back but is != itself.
  std::string printed_again;
  Check(google::protobuf::TextFormat::PrintToString(*again, &printed_again) &&
            printed_again == printed,
        "a config changes through a text round trip");
  return true;
}

void CheckValidation(const absl::Status& status) {
  if (status.ok()) return;
  Check(status.code() != absl::StatusCode::kInternal &&
            status.code() != absl::StatusCode::kUnknown && !status.message().empty(),
        "config validation failed without a clear error");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const absl::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0: {
      ibgraphrag::config::v1::ServerConfig config;
      if (ParseAndRoundTrip(text, &config)) {
        CheckValidation(ibgraphrag::common::ValidateServerConfig(config));
      }
      break;
    }
    case 1: {
      ibgraphrag::config::v1::ReasonerConfig config;
      if (ParseAndRoundTrip(text, &config)) {
        CheckValidation(ibgraphrag::reasoner::ValidateReasonerConfig(config));
      }
      break;
    }
    default: {
      ibgraphrag::config::v1::AlignmentConfig config;
      if (ParseAndRoundTrip(text, &config) && config.has_server()) {
        CheckValidation(ibgraphrag::common::ValidateServerConfig(config.server()));
      }
      break;
    }
  }
  return 0;
}
