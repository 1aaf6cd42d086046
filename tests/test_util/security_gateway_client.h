// Gateway calls for the security tests (tests/security/): a multiple-choice question carrying a
// marker in its text and options, sent with an API key over Answer or AnswerStream.
#ifndef IBGRAPHRAG_TESTS_TEST_UTIL_SECURITY_GATEWAY_CLIENT_H_
#define IBGRAPHRAG_TESTS_TEST_UTIL_SECURITY_GATEWAY_CLIENT_H_

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <string>

#include "absl/strings/str_cat.h"
#include "ibgraphrag/v1/gateway.grpc.pb.h"

namespace ibgraphrag::testing {

// "Which drug treats type 2 diabetes mellitus? <marker>" with options Metformin and
// "Polyuria <marker>"; `mode` is PipelineOptions.mode ("" = default).
inline ibgraphrag::v1::AnswerRequest MarkedQuestion(const std::string& marker,
                                                    const std::string& mode = "") {
  ibgraphrag::v1::AnswerRequest request;
  request.set_question(absl::StrCat("Which drug treats type 2 diabetes mellitus? ", marker));
  request.add_options("Metformin");
  request.add_options(absl::StrCat("Polyuria ", marker));
  request.set_task(ibgraphrag::v1::TASK_MULTIPLE_CHOICE);
  if (!mode.empty()) request.mutable_pipeline()->set_mode(mode);
  return request;
}

// Answer with `key` as a bearer token (none when empty), 30 s deadline.
inline grpc::Status AskWithKey(ibgraphrag::v1::GatewayService::Stub& stub,
                               const ibgraphrag::v1::AnswerRequest& request, const std::string& key,
                               ibgraphrag::v1::AnswerResponse* response) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  if (!key.empty()) ctx.AddMetadata("authorization", absl::StrCat("Bearer ", key));
  return stub.Answer(&ctx, request, response);
}

// AnswerStream with `key` in x-api-key, reading every event; the stream's final status.
inline grpc::Status AskStreamingWithKey(ibgraphrag::v1::GatewayService::Stub& stub,
                                        const ibgraphrag::v1::AnswerRequest& request,
                                        const std::string& key) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  ctx.AddMetadata("x-api-key", key);
  ibgraphrag::v1::AnswerStreamRequest stream_request;
  *stream_request.mutable_request() = request;
  auto reader = stub.AnswerStream(&ctx, stream_request);
  ibgraphrag::v1::AnswerStreamResponse message;
  while (reader->Read(&message)) {
  }
  return reader->Finish();
}

}  // namespace ibgraphrag::testing

#endif  // IBGRAPHRAG_TESTS_TEST_UTIL_SECURITY_GATEWAY_CLIENT_H_
