#include "common/test_util/test_util.h"

#include <arpa/inet.h>
#include <grpcpp/client_context.h>
#include <grpcpp/impl/rpc_method.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/sync_stream.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/client.h"
#include "common/grpc_status.h"
#include "common/logging.h"
#include "common/server_interceptor.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/descriptor.pb.h"
#include "google/protobuf/message.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "gtest/gtest.h"

namespace ibgraphrag::common::test_util {

using ibgraphrag::common::testdata::EchoRequest;
using ibgraphrag::common::testdata::EchoResponse;

absl::StatusOr<std::string> RunCommand(const std::string& command, int* exit_code) {
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return absl::InternalError(absl::StrCat("popen: ", std::strerror(errno)));
  std::string output;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) output.append(buffer, n);
  const int status = ::pclose(pipe);
  *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return output;
}

bool HaveProgram(const std::string& program) {
  int exit_code = 0;
  auto output = RunCommand(absl::StrCat("command -v ", program), &exit_code);
  return output.ok() && exit_code == 0;
}

::testing::AssertionResult ProgramInstalled(const std::string& program,
                                            const std::string& package) {
  if (HaveProgram(program)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << program << " is not installed (not on PATH): apt-get install -y " << package
         << " (scripts/install_deps.sh installs every tool the tests need)";
}

void WriteFileOrDie(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary);
  out << contents;
  out.close();
  if (!out) ADD_FAILURE() << "cannot write " << path;
}

absl::StatusOr<std::string> HttpGet(int port, const std::string& path) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(absl::StrCat("socket: ", std::strerror(errno)));
  // Bounds a hung server instead of hanging the test.
  timeval timeout{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    const std::string error = std::strerror(errno);
    ::close(fd);
    return absl::UnavailableError(absl::StrCat("connect 127.0.0.1:", port, ": ", error));
  }
  const std::string request =
      absl::StrCat("GET ", path, " HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size())) {
    ::close(fd);
    return absl::UnavailableError("send failed");
  }
  std::string response;
  char buffer[8192];
  for (;;) {
    const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    response.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  const size_t header_end = response.find("\r\n\r\n");
  if (header_end == std::string::npos) {
    return absl::InternalError(absl::StrCat("malformed HTTP response: ", response));
  }
  const std::string status_line = response.substr(0, response.find("\r\n"));
  if (!absl::StrContains(status_line, " 200")) {
    return absl::InternalError(absl::StrCat("HTTP status: ", status_line));
  }
  return response.substr(header_end + 4);
}

absl::StatusOr<TestCertificates> MakeTestCertificates(const std::string& dir) {
  const std::string ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
  const auto key_and_csr = [&](const std::string& name, const std::string& cn) {
    return absl::StrCat("openssl req ", ec, " -keyout ", dir, "/", name, ".key -out ", dir, "/",
                        name, ".csr -subj /CN=", cn);
  };
  const auto sign = [&](const std::string& name, const std::string& ca, const std::string& ext) {
    return absl::StrCat("printf '", ext, "\\n' > ", dir, "/", name,
                        ".ext && openssl x509 -req -in ", dir, "/", name, ".csr -CA ", dir, "/", ca,
                        ".pem -CAkey ", dir, "/", ca, ".key -CAcreateserial -days 2 -out ", dir,
                        "/", name, ".pem -extfile ", dir, "/", name, ".ext");
  };
  const auto make_ca = [&](const std::string& name) {
    return absl::StrCat("openssl req -x509 ", ec, " -keyout ", dir, "/", name, ".key -out ", dir,
                        "/", name, ".pem -days 2 -subj /CN=", name);
  };
  const std::string commands[] = {
      make_ca("ca"),
      make_ca("rogue_ca"),
      key_and_csr("server", "localhost"),
      sign("server", "ca", "subjectAltName=DNS:localhost,IP:127.0.0.1"),
      key_and_csr("client", "ibgr-test-client"),
      sign("client", "ca", "extendedKeyUsage=clientAuth"),
      key_and_csr("rogue_client", "ibgr-rogue-client"),
      sign("rogue_client", "rogue_ca", "extendedKeyUsage=clientAuth"),
  };
  for (const std::string& command : commands) {
    int exit_code = 0;
    auto output = RunCommand(command, &exit_code);
    if (!output.ok()) return output.status();
    if (exit_code != 0) {
      return absl::InternalError(absl::StrCat("`", command, "` failed: ", *output));
    }
  }
  TestCertificates certs;
  certs.ca_cert = dir + "/ca.pem";
  certs.server_cert = dir + "/server.pem";
  certs.server_key = dir + "/server.key";
  certs.client_cert = dir + "/client.pem";
  certs.client_key = dir + "/client.key";
  certs.rogue_client_cert = dir + "/rogue_client.pem";
  certs.rogue_client_key = dir + "/rogue_client.key";
  return certs;
}

absl::StatusOr<grpc::health::v1::HealthCheckResponse::ServingStatus> CheckHealth(
    const std::shared_ptr<grpc::Channel>& channel, const std::string& service) {
  auto stub = grpc::health::v1::Health::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  grpc::health::v1::HealthCheckResponse response;
  const grpc::Status status = stub->Check(&context, request, &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return response.status();
}

namespace {

// One request/response exchange on ServerReflectionInfo. `set_request` fills the request.
absl::StatusOr<std::unique_ptr<google::protobuf::Message>> ReflectionCall(
    const std::shared_ptr<grpc::Channel>& channel,
    const std::function<void(google::protobuf::Message*)>& set_request) {
  const auto* pool = google::protobuf::DescriptorPool::generated_pool();
  const auto* request_type =
      pool->FindMessageTypeByName("grpc.reflection.v1alpha.ServerReflectionRequest");
  const auto* response_type =
      pool->FindMessageTypeByName("grpc.reflection.v1alpha.ServerReflectionResponse");
  if (request_type == nullptr || response_type == nullptr) {
    return absl::FailedPreconditionError("reflection descriptors are not linked in");
  }
  auto* factory = google::protobuf::MessageFactory::generated_factory();
  std::unique_ptr<google::protobuf::Message> request(factory->GetPrototype(request_type)->New());
  set_request(request.get());
  std::string wire;
  request->SerializeToString(&wire);

  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  const grpc::internal::RpcMethod method(
      "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
      grpc::internal::RpcMethod::BIDI_STREAMING);
  std::unique_ptr<grpc::ClientReaderWriter<grpc::ByteBuffer, grpc::ByteBuffer>> stream(
      grpc::internal::ClientReaderWriterFactory<grpc::ByteBuffer, grpc::ByteBuffer>::Create(
          channel.get(), method, &context));
  grpc::Slice slice(wire);
  grpc::ByteBuffer out(&slice, 1);
  grpc::ByteBuffer in;
  if (!stream->Write(out) || !stream->WritesDone() || !stream->Read(&in)) {
    return FromGrpcStatus(stream->Finish());
  }
  std::vector<grpc::Slice> slices;
  (void)in.Dump(&slices);
  std::string received;
  for (const grpc::Slice& s : slices) {
    received.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  grpc::ByteBuffer extra;
  while (stream->Read(&extra)) {
  }
  const grpc::Status status = stream->Finish();
  if (!status.ok()) return FromGrpcStatus(status);
  std::unique_ptr<google::protobuf::Message> response(factory->GetPrototype(response_type)->New());
  if (!response->ParseFromString(received)) {
    return absl::InternalError("unparsable reflection response");
  }
  return response;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ReflectionListServices(
    const std::shared_ptr<grpc::Channel>& channel) {
  auto response = ReflectionCall(channel, [](google::protobuf::Message* request) {
    request->GetReflection()->SetString(
        request, request->GetDescriptor()->FindFieldByName("list_services"), "");
  });
  if (!response.ok()) return response.status();
  const google::protobuf::Message& message = **response;
  const auto* list_field = message.GetDescriptor()->FindFieldByName("list_services_response");
  if (!message.GetReflection()->HasField(message, list_field)) {
    return absl::InternalError(
        absl::StrCat("no list_services_response in ", message.ShortDebugString()));
  }
  const google::protobuf::Message& list = message.GetReflection()->GetMessage(message, list_field);
  const auto* service_field = list.GetDescriptor()->FindFieldByName("service");
  std::vector<std::string> names;
  for (int i = 0; i < list.GetReflection()->FieldSize(list, service_field); ++i) {
    const google::protobuf::Message& service =
        list.GetReflection()->GetRepeatedMessage(list, service_field, i);
    names.push_back(service.GetReflection()->GetString(
        service, service.GetDescriptor()->FindFieldByName("name")));
  }
  return names;
}

absl::StatusOr<std::vector<std::string>> ReflectionFilesContainingSymbol(
    const std::shared_ptr<grpc::Channel>& channel, const std::string& symbol) {
  auto response = ReflectionCall(channel, [&](google::protobuf::Message* request) {
    request->GetReflection()->SetString(
        request, request->GetDescriptor()->FindFieldByName("file_containing_symbol"), symbol);
  });
  if (!response.ok()) return response.status();
  const google::protobuf::Message& message = **response;
  const auto* files_field = message.GetDescriptor()->FindFieldByName("file_descriptor_response");
  if (!message.GetReflection()->HasField(message, files_field)) {
    return absl::NotFoundError(
        absl::StrCat("no file for ", symbol, ": ", message.ShortDebugString()));
  }
  const google::protobuf::Message& files =
      message.GetReflection()->GetMessage(message, files_field);
  const auto* bytes_field = files.GetDescriptor()->FindFieldByName("file_descriptor_proto");
  std::vector<std::string> names;
  for (int i = 0; i < files.GetReflection()->FieldSize(files, bytes_field); ++i) {
    google::protobuf::FileDescriptorProto file;
    file.ParseFromString(files.GetReflection()->GetRepeatedString(files, bytes_field, i));
    names.push_back(file.name());
  }
  return names;
}

grpc::Status EchoTestServiceImpl::Echo(grpc::ServerContext* context, const EchoRequest* request,
                                       EchoResponse* response) {
  const std::string request_id = RequestIdOf(*context);
  // Must stay silent unless payload logging is switched on.
  LogPayload("echo request", request_id, *request);
  int attempts = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    attempts = ++attempts_[request->key()];
    ++total_calls_;
  }
  if (request->fail_code() != 0 &&
      (request->fail_first_n() == 0 || attempts <= request->fail_first_n())) {
    return grpc::Status(static_cast<grpc::StatusCode>(request->fail_code()),
                        absl::StrCat("failing as asked (attempt ", attempts, ")"));
  }
  if (request->hold()) {
    std::unique_lock<std::mutex> lock(mu_);
    ++held_calls_started_;
    cv_.notify_all();
    // Bounded so that a broken test cannot hang forever.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!released_) {
      if (context->IsCancelled()) {
        ++cancellations_observed_;
        cv_.notify_all();
        return grpc::Status(grpc::StatusCode::CANCELLED, "cancelled while held");
      }
      if (std::chrono::steady_clock::now() > give_up) {
        return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "held call never released");
      }
      cv_.wait_for(lock, std::chrono::milliseconds(5));
    }
  }
  response->set_message(request->message());
  response->set_request_id(request_id);
  response->set_attempts(attempts);
  const auto deadline = context->deadline();
  if (deadline == std::chrono::system_clock::time_point::max()) {
    response->set_deadline_remaining_ms(-1);
  } else {
    response->set_deadline_remaining_ms(std::chrono::duration_cast<std::chrono::milliseconds>(
                                            deadline - std::chrono::system_clock::now())
                                            .count());
  }
  return grpc::Status::OK;
}

grpc::Status EchoTestServiceImpl::Forward(grpc::ServerContext* context, const EchoRequest* request,
                                          EchoResponse* response) {
  ibgraphrag::common::testdata::EchoTestService::Stub* downstream;
  {
    std::lock_guard<std::mutex> lock(mu_);
    downstream = downstream_.get();
  }
  if (downstream == nullptr) {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "no downstream");
  }
  std::unique_ptr<grpc::ClientContext> child =
      MakeChildContext(*context, absl::Milliseconds(request->budget_ms()));
  return downstream->Echo(child.get(), *request, response);
}

void EchoTestServiceImpl::SetDownstream(std::shared_ptr<grpc::Channel> channel) {
  std::lock_guard<std::mutex> lock(mu_);
  downstream_ = ibgraphrag::common::testdata::EchoTestService::NewStub(std::move(channel));
}

int EchoTestServiceImpl::Attempts(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = attempts_.find(key);
  return it == attempts_.end() ? 0 : it->second;
}

int EchoTestServiceImpl::TotalCalls() {
  std::lock_guard<std::mutex> lock(mu_);
  return total_calls_;
}

bool EchoTestServiceImpl::WaitForHeldCalls(int count, absl::Duration timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, absl::ToChronoMilliseconds(timeout),
                      [&] { return held_calls_started_ >= count; });
}

void EchoTestServiceImpl::ReleaseHeldCalls() {
  std::lock_guard<std::mutex> lock(mu_);
  released_ = true;
  cv_.notify_all();
}

bool EchoTestServiceImpl::WaitForObservedCancellation(absl::Duration timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, absl::ToChronoMilliseconds(timeout),
                      [&] { return cancellations_observed_ > 0; });
}

}  // namespace ibgraphrag::common::test_util
