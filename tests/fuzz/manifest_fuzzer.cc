// Artifact manifests: bytes on disk that a copy, a bad disk or an operator may have mangled.
// One source, one target per manifest (IBGR_FUZZ_MANIFEST picks it):
//   1 kg snapshot       services/kgstore/snapshot_manifest.h SnapshotManifestFromJson
//   2 alignment bundle  services/alignment/bundle.h BundleManifestFromJson
//   3 retriever model   services/retriever/model_bundle.h RetrieverManifestFromJson
//   4 calibration       artifacts.v1.CalibrationManifest and ConfidenceCalibration through
//                       common::JsonToProto, then CalibrationModel::FromProto
//   5 documents         artifacts.v1.DocumentsManifest through common::JsonToProto
// A manifest that parses must survive its own serialisation (ToJson -> FromJson -> same JSON);
// one that does not must be refused with an error, never a crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tests/fuzz/fuzz_util.h"

#if IBGR_FUZZ_MANIFEST == 1
#include "services/kgstore/snapshot_manifest.h"
#elif IBGR_FUZZ_MANIFEST == 2
#include "services/alignment/bundle.h"
#elif IBGR_FUZZ_MANIFEST == 3
#include "services/retriever/model_bundle.h"
#elif IBGR_FUZZ_MANIFEST == 4 || IBGR_FUZZ_MANIFEST == 5
#include <cmath>

#include "common/proto_json.h"
#include "ibgraphrag/artifacts/v1/manifests.pb.h"
#if IBGR_FUZZ_MANIFEST == 4
#include "services/reasoner/confidence_calibration.h"
#endif
#else
#error "IBGR_FUZZ_MANIFEST must be 1..5"
#endif

namespace {

using ibgraphrag::fuzz::Check;
using ibgraphrag::fuzz::CheckJsonRoundTrip;

// An error a manifest reader may give for bad bytes: a clear one with a message.
void CheckRefusal(const absl::Status& status) {
  Check(!status.ok() && !status.message().empty() && status.code() != absl::StatusCode::kInternal &&
            status.code() != absl::StatusCode::kUnknown,
        "a malformed manifest was refused without a clear error");
}

#if IBGR_FUZZ_MANIFEST <= 3
// Struct manifests: `from_json` refuses cleanly, or gives a value that survives `to_json` and
// `from_json` again.
template <typename FromJson, typename ToJson>
auto ParseManifest(const std::string& json, FromJson from_json, ToJson to_json) {
  auto manifest = from_json(json);
  if (!manifest.ok()) {
    CheckRefusal(manifest.status());
    return manifest;
  }
  CheckJsonRoundTrip(*manifest, to_json, from_json, "manifest JSON round trip");
  return manifest;
}
#endif

#if IBGR_FUZZ_MANIFEST == 4 || IBGR_FUZZ_MANIFEST == 5
// Proto manifests: the JSON mapping is the schema, so the round trip is ProtoToJson/JsonToProto.
template <typename Proto>
bool ParseProtoManifest(absl::string_view json, Proto* proto) {
  const absl::Status status = ibgraphrag::common::JsonToProto(json, "manifest", proto);
  if (!status.ok()) {
    CheckRefusal(status);
    return false;
  }
  CheckJsonRoundTrip(
      *proto, [](const Proto& p) { return ibgraphrag::common::ProtoToJson(p); },
      [](const std::string& text) -> absl::StatusOr<Proto> {
        Proto again;
        absl::Status parsed = ibgraphrag::common::JsonToProto(text, "manifest", &again);
        if (!parsed.ok()) return parsed;
        return again;
      },
      "proto manifest JSON round trip");
  return true;
}
#endif

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string json(reinterpret_cast<const char*>(data), size);
#if IBGR_FUZZ_MANIFEST == 1
  using namespace ibgraphrag::kgstore;  // NOLINT: the manifest's free functions
  ParseManifest(json, SnapshotManifestFromJson, SnapshotManifestToJson);
#elif IBGR_FUZZ_MANIFEST == 2
  using namespace ibgraphrag::alignment;  // NOLINT
  ParseManifest(json, BundleManifestFromJson, BundleManifestToJson);
#elif IBGR_FUZZ_MANIFEST == 3
  using namespace ibgraphrag::retriever;  // NOLINT
  auto manifest = ParseManifest(json, RetrieverManifestFromJson, RetrieverManifestToJson);
  if (!manifest.ok()) return 0;
  // What loading asks of a parsed manifest must not crash either.
  TrainedMaxScored(*manifest);
  TrainedOntologyExpansion(*manifest);
#elif IBGR_FUZZ_MANIFEST == 4
  ibgraphrag::artifacts::v1::CalibrationManifest manifest;
  ParseProtoManifest(json, &manifest);
  ibgraphrag::artifacts::v1::ConfidenceCalibration calibration;
  if (!ParseProtoManifest(json, &calibration)) return 0;
  auto model = ibgraphrag::reasoner::CalibrationModel::FromProto(calibration, "fuzz");
  if (!model.ok()) return CheckRefusal(model.status()), 0;
  // A calibration that loads gives probabilities, whatever the signals.
  ibgraphrag::reasoner::ExtractiveSignals signals;
  signals.present = true;
  signals.top_support = 1.5;
  for (const auto& task : model->proto().tasks()) {
    const double p = ibgraphrag::reasoner::CalibrationModel::Probability(task, signals);
    Check(std::isfinite(p) && p >= 0 && p <= 1, "a loaded calibration gives no probability");
  }
#else
  ibgraphrag::artifacts::v1::DocumentsManifest manifest;
  ParseProtoManifest(json, &manifest);
#endif
  return 0;
}
