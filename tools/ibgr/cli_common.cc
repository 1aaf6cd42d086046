#include "tools/ibgr/cli_common.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "absl/flags/flag.h"
#include "common/client.h"

ABSL_FLAG(std::string, tls_ca, "",
          "client: PEM CA that signs the server certificate (enables TLS)");
ABSL_FLAG(std::string, tls_cert, "", "client: PEM certificate for mTLS");
ABSL_FLAG(std::string, tls_key, "", "client: PEM private key for mTLS");
ABSL_FLAG(std::string, tls_server_name, "", "client: name to check in the server certificate");

namespace ibgraphrag::cli {

std::string SelfDir() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : self.parent_path().string();
}

std::string DefaultDataDir() {
  if (const char* env = std::getenv("IBGR_DATA_DIR"); env != nullptr && *env != '\0') return env;
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    // build/bin/ibgr -> <repo>/../shared/data
    const auto candidate =
        exe.parent_path().parent_path().parent_path().parent_path() / "shared" / "data";
    if (std::filesystem::is_directory(candidate, ec)) return candidate.lexically_normal().string();
  }
  return "../shared/data";
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> ChannelTo(const std::string& target) {
  common::ChannelOptions options;
  options.target = target;
  options.round_robin = false;
  if (!absl::GetFlag(FLAGS_tls_ca).empty()) {
    options.tls.enabled = true;
    options.tls.ca_cert_path = absl::GetFlag(FLAGS_tls_ca);
    options.tls.cert_path = absl::GetFlag(FLAGS_tls_cert);
    options.tls.key_path = absl::GetFlag(FLAGS_tls_key);
    options.tls.server_name_override = absl::GetFlag(FLAGS_tls_server_name);
  }
  return common::MakeChannel(options);
}

}  // namespace ibgraphrag::cli
