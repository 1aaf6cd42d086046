// Small helpers shared by the kgstore integration and crash tests.
#ifndef IBGRAPHRAG_TESTS_TEST_UTIL_KGSTORE_CLIENT_H_
#define IBGRAPHRAG_TESTS_TEST_UTIL_KGSTORE_CLIENT_H_

#include <chrono>
#include <memory>
#include <string>

#include "grpcpp/grpcpp.h"
#include "ibgraphrag/v1/kgstore.grpc.pb.h"

namespace ibgraphrag::testing {

inline std::unique_ptr<ibgraphrag::v1::KgStoreService::Stub> KgStub(int port) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  return ibgraphrag::v1::KgStoreService::NewStub(grpc::CreateCustomChannel(
      "127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials(), args));
}

inline void SetDeadline(grpc::ClientContext* ctx, int seconds = 10) {
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(seconds));
}

// Sends one Ingest call with one batch and waits for the acknowledgement.
inline grpc::Status IngestOne(ibgraphrag::v1::KgStoreService::Stub* stub,
                              const ibgraphrag::v1::IngestRequest& batch,
                              ibgraphrag::v1::IngestResponse* response, int seconds = 10) {
  grpc::ClientContext ctx;
  SetDeadline(&ctx, seconds);
  auto writer = stub->Ingest(&ctx, response);
  writer->Write(batch);
  writer->WritesDone();
  return writer->Finish();
}

}  // namespace ibgraphrag::testing

#endif  // IBGRAPHRAG_TESTS_TEST_UTIL_KGSTORE_CLIENT_H_
