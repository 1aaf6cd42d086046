#include "common/http_gateway.h"

#include <grpcpp/create_channel.h>

#include "common/proto_json.h"
#include "common/test_util/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ibgraphrag/v1/gateway.pb.h"
#include "ibgraphrag/v1/kgstore.pb.h"
#include "nlohmann/json.hpp"

namespace ibgraphrag::common {
namespace {

using ::ibgraphrag::common::test_util::IsOk;
using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(HttpGatewayTest, GrpcCodesMapToTheirHttpStatus) {
  EXPECT_EQ(HttpStatusForGrpcCode(grpc::StatusCode::OK), 200);
  EXPECT_EQ(HttpStatusForGrpcCode(grpc::StatusCode::INVALID_ARGUMENT), 400);
  EXPECT_EQ(HttpStatusForGrpcCode(grpc::StatusCode::FAILED_PRECONDITION), 400);
  EXPECT_EQ(HttpStatusForGrpcCode(grpc::StatusCode::UNAUTHENTICATED), 401);
  EXPECT_EQ(HttpStatusForGrpcCode(grpc::StatusCode::PERMISSION_DENIED), 403);
  EXPECT_EQ(HttpStatusForGrpcCode(grpc::StatusCode::NOT_FOUND), 404);
  EXPECT_EQ(HttpStatusForGrpcCode(grpc::StatusCode::RESOURCE_EXHAUSTED), 429);
  EXPECT_EQ(HttpStatusForGrpcCode(grpc::StatusCode::CANCELLED), 499);
  EXPECT_EQ(HttpStatusForGrpcCode(grpc::StatusCode::INTERNAL), 500);
  EXPECT_EQ(HttpStatusForGrpcCode(grpc::StatusCode::UNIMPLEMENTED), 501);
  EXPECT_EQ(HttpStatusForGrpcCode(grpc::StatusCode::UNAVAILABLE), 503);
  EXPECT_EQ(HttpStatusForGrpcCode(grpc::StatusCode::DEADLINE_EXCEEDED), 504);
}

TEST(HttpGatewayTest, ErrorBodyCarriesCodeNameMessageAndRequestId) {
  auto body = nlohmann::json::parse(
      HttpErrorJson(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "question: \"empty\""), "r1"));
  EXPECT_EQ(body["code"], "INVALID_ARGUMENT");
  EXPECT_EQ(body["message"], "question: \"empty\"");
  EXPECT_EQ(body["request_id"], "r1");
  body = nlohmann::json::parse(HttpErrorJson(grpc::Status(grpc::StatusCode::UNAVAILABLE, ""), ""));
  EXPECT_FALSE(body.contains("request_id"));
  // Invalid UTF-8 in a message is replaced, not thrown.
  EXPECT_THAT(HttpErrorJson(grpc::Status(grpc::StatusCode::INTERNAL, "bad \xff"), ""),
              HasSubstr("INTERNAL"));
}

TEST(HttpGatewayTest, ResponseJsonIsCanonicalProto3WithProtoFieldNames) {
  ibgraphrag::v1::AnswerResponse response;
  response.mutable_answer()->set_text("fine");
  response.set_request_id("r-1");
  absl::StatusOr<std::string> json = ProtoToJsonLine(response);
  ASSERT_OK(json);
  const nlohmann::json parsed = nlohmann::json::parse(*json);
  EXPECT_EQ(parsed["answer"]["text"], "fine");
  EXPECT_EQ(parsed["request_id"], "r-1");  // proto field names, not lowerCamelCase
  // Fields at their default value are left out.
  EXPECT_FALSE(parsed.contains("evidence"));
  EXPECT_FALSE(parsed.contains("entities"));
}

TEST(HttpGatewayTest, GrpcTimeoutHeaderParsesGrpcUnits) {
  EXPECT_EQ(*ParseGrpcTimeout("2S"), absl::Seconds(2));
  EXPECT_EQ(*ParseGrpcTimeout("500m"), absl::Milliseconds(500));
  EXPECT_EQ(*ParseGrpcTimeout("1H"), absl::Hours(1));
  EXPECT_EQ(*ParseGrpcTimeout("7n"), absl::Nanoseconds(7));
  for (const char* bad :
       {"", "S", "5", "5s", "-1S", "123456789S", "1.5S", "+1S", "1\tS", " 1S", "9234789\tH"}) {
    auto parsed = ParseGrpcTimeout(bad);
    ASSERT_THAT(parsed, Not(IsOk())) << bad;
    EXPECT_THAT(parsed.status().message(), HasSubstr("Grpc-Timeout"));
  }
}

// Options of a test gateway for `service` on loopback, and a channel to nowhere (Start only
// validates and binds).
HttpGateway::Options LoopbackOptions(const std::string& service) {
  HttpGateway::Options options;
  options.server_name = "test";
  options.listen_host = "127.0.0.1";
  options.services = {service};
  return options;
}

std::shared_ptr<grpc::Channel> UnusedChannel() {
  return grpc::CreateChannel("127.0.0.1:1", grpc::InsecureChannelCredentials());
}

TEST(HttpGatewayTest, StartRefusesServicesWithoutRoutesAndBadOptions) {
  // Link the protos of the services named below (static-library objects link only on use).
  ASSERT_NE(ibgraphrag::v1::AnswerRequest::descriptor(), nullptr);
  ASSERT_NE(ibgraphrag::v1::GetEntitiesRequest::descriptor(), nullptr);
  HttpGateway::Options options = LoopbackOptions("ibgraphrag.v1.KgStoreService");
  auto channel = UnusedChannel();
  auto started = HttpGateway::Start(options, channel);
  ASSERT_THAT(started, Not(IsOk()));
  EXPECT_THAT(started.status().message(), HasSubstr("no google.api.http annotation"));
  options.services = {"no.such.Service"};
  started = HttpGateway::Start(options, channel);
  ASSERT_THAT(started, Not(IsOk()));
  EXPECT_THAT(started.status().message(), HasSubstr("no.such.Service"));
  options.services = {"ibgraphrag.v1.GatewayService"};
  options.port = 70000;
  started = HttpGateway::Start(options, channel);
  ASSERT_THAT(started, Not(IsOk()));
  EXPECT_THAT(started.status().message(), HasSubstr("http_port"));
}

TEST(HttpGatewayTest, StartRefusesUiFilesThatAreNotPlainNamesOrLackAnIndex) {
  ASSERT_NE(ibgraphrag::v1::AnswerRequest::descriptor(), nullptr);
  HttpGateway::Options options = LoopbackOptions("ibgraphrag.v1.GatewayService");
  auto channel = UnusedChannel();
  options.ui_files = {{"viewer.js", "x"}};
  auto started = HttpGateway::Start(options, channel);
  ASSERT_THAT(started, StatusIs(absl::StatusCode::kInvalidArgument,
                                HasSubstr("ui_files: needs an index.html")));
  for (const char* name : {"../index.html", "a/b.js", ".hidden", "", "a b.js", "x.*"}) {
    options.ui_files = {{"index.html", "<html>"}, {name, "x"}};
    started = HttpGateway::Start(options, channel);
    ASSERT_THAT(started, Not(IsOk())) << name;
    EXPECT_THAT(started.status().message(), HasSubstr("is not a plain file name")) << name;
  }
}

}  // namespace
}  // namespace ibgraphrag::common
