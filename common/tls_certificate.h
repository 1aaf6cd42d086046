// Dates of a served TLS certificate, read once at start-up. A server whose certificate has
// expired (or is not valid yet) is unreachable: every client refuses the handshake, and all it
// reports is UNAVAILABLE on the client side. ServerRunner therefore refuses to start with such a
// certificate, warns when one is close to expiry and exports the expiry time as a metric, so ops
// can alert before it happens (as Envoy's days_until_first_cert_expiring does).
#ifndef IBGRAPHRAG_COMMON_TLS_CERTIFICATE_H_
#define IBGRAPHRAG_COMMON_TLS_CERTIFICATE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace ibgraphrag::common {

struct CertificateValidity {
  absl::Time not_before;
  absl::Time not_after;
};

// Validity of the first (leaf) certificate of a PEM chain. INVALID_ARGUMENT naming `field` when
// `pem` holds no parsable certificate.
absl::StatusOr<CertificateValidity> ReadCertificateValidity(absl::string_view pem,
                                                            absl::string_view field);

// How far the host clock may lag a certificate's notBefore: a certificate issued moments ago
// (cert-manager sets notBefore to the issue time) must not fail a pod whose node clock is a
// little behind the issuer's.
inline constexpr absl::Duration kCertificateClockSkew = absl::Minutes(5);

// FAILED_PRECONDITION naming `field` and the date when `now` is after notAfter, or more than
// kCertificateClockSkew before notBefore.
absl::Status CheckCertificateDates(const CertificateValidity& validity, absl::Time now,
                                   absl::string_view field);

// RFC 3339 UTC, e.g. "2026-11-24T10:00:00Z".
std::string FormatCertificateTime(absl::Time t);

}  // namespace ibgraphrag::common

#endif  // IBGRAPHRAG_COMMON_TLS_CERTIFICATE_H_
