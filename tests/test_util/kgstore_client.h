// Small helpers shared by the kgstore integration and crash tests.
#ifndef IBGRAPHRAG_TESTS_TEST_UTIL_KGSTORE_CLIENT_H_
#define IBGRAPHRAG_TESTS_TEST_UTIL_KGSTORE_CLIENT_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
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

// How many out-neighbours `external_id` has (the server's total, not capped by the limit); -1
// when the entity does not exist. Any other error fails the calling test.
inline int64_t OutDegree(ibgraphrag::v1::KgStoreService::Stub* stub,
                         const std::string& external_id) {
  grpc::ClientContext ctx;
  SetDeadline(&ctx);
  ibgraphrag::v1::NeighborsRequest req;
  req.set_external_id(external_id);
  req.set_direction(ibgraphrag::v1::DIRECTION_OUT);
  req.set_limit(1);
  req.set_entity_detail(ibgraphrag::v1::ENTITY_DETAIL_IDS);
  ibgraphrag::v1::NeighborsResponse resp;
  grpc::Status s = stub->Neighbors(&ctx, req, &resp);
  if (s.error_code() == grpc::StatusCode::NOT_FOUND) return -1;
  EXPECT_TRUE(s.ok()) << s.error_message();
  return static_cast<int64_t>(resp.total());
}

}  // namespace ibgraphrag::testing

#endif  // IBGRAPHRAG_TESTS_TEST_UTIL_KGSTORE_CLIENT_H_
