// The reasoner's config file (ibgraphrag.config.v1.ReasonerConfig, protobuf text format) mapped
// onto ReasonerServer::Options, with every field checked first so that a bad file stops the
// process with a message naming the field ("backends[1].timeout_seconds: ...") instead of
// serving half-configured.
#ifndef IBGRAPHRAG_SERVICES_REASONER_REASONER_CONFIG_H_
#define IBGRAPHRAG_SERVICES_REASONER_REASONER_CONFIG_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ibgraphrag/config/v1/reasoner_config.pb.h"
#include "services/reasoner/confidence_calibration.h"
#include "services/reasoner/reasoner_server.h"

namespace ibgraphrag::reasoner {

// Checks every field of `config` against the limits documented in reasoner_config.proto, that
// named API-key environment variables are set and key files readable, that the prompt directory
// and pinned prompt versions exist, and the `server` block (common::ValidateServerConfig).
// INVALID_ARGUMENT (FAILED_PRECONDITION for a missing key, NOT_FOUND for missing prompt files)
// with a message that starts with the field path.
absl::Status ValidateReasonerConfig(const ibgraphrag::config::v1::ReasonerConfig& config);

// Validates `config` and maps it to server options: unset fields keep the documented defaults
// (ports 50055 / 9095, service name "reasoner"); server.log_payloads also turns on
// ReasonerOptions::log_patient_text. No side effects besides reading the files named above.
absl::StatusOr<ReasonerServer::Options> ReasonerServerOptionsFromConfig(
    const ibgraphrag::config::v1::ReasonerConfig& config);

// The reasoner options of a process that serves its own reasoner (the all-in-one,
// `gateway --reasoner=local`), from its flags: the ReasonerConfig text proto at `config_path`
// ("" = the defaults, the extractive backend only) mapped as above, and the extractive
// calibration that `calibration_spec` names (LoadCalibrationSpec against `base`; "auto" without
// a base is none). Errors start with the flag they come from ("--reasoner_config PATH: ...",
// "--calibration: ...").
absl::StatusOr<ReasonerServer::Options> LoadReasonerOptionsFromFlags(
    const std::string& config_path, const std::string& calibration_spec, const std::string& base);

// The extractive calibration a `--calibration` flag names (LoadCalibrationSpec against `base`;
// "auto" without a base is none). Errors start with "--calibration: ".
absl::StatusOr<std::shared_ptr<const CalibrationModel>> LoadCalibrationFlag(
    const std::string& calibration_spec, const std::string& base);

}  // namespace ibgraphrag::reasoner

#endif  // IBGRAPHRAG_SERVICES_REASONER_REASONER_CONFIG_H_
