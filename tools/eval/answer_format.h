// How `ibgr ask` shows an AnswerResponse: a readable report (answer, entities, evidence, paths,
// timings, degradations, versions, request id) or the proto's JSON mapping.
#ifndef IBGRAPHRAG_TOOLS_EVAL_ANSWER_FORMAT_H_
#define IBGRAPHRAG_TOOLS_EVAL_ANSWER_FORMAT_H_

#include <string>

#include "absl/status/statusor.h"
#include "google/protobuf/message.h"
#include "ibgraphrag/v1/gateway.pb.h"

namespace ibgraphrag::eval {

struct AnswerFormatOptions {
  // Evidence triples and reasoning paths listed; the rest are counted ("10 of 100 shown").
  int max_evidence = 10;
  int max_paths = 5;
};

// The readable report; ends with a newline. The question is not repeated (patient data).
std::string FormatAnswerText(const v1::AnswerResponse& response,
                             const AnswerFormatOptions& options = {});

// One stage event of AnswerStream: "[align] 3.1 ms  3 entities kept".
std::string FormatStageEvent(const v1::StageEvent& event);

// The proto3 JSON mapping (lowerCamelCase names, default values printed so that option index 0
// and zero scores are visible); `pretty` adds indentation.
absl::StatusOr<std::string> MessageToJson(const google::protobuf::Message& message, bool pretty);

}  // namespace ibgraphrag::eval

#endif  // IBGRAPHRAG_TOOLS_EVAL_ANSWER_FORMAT_H_
