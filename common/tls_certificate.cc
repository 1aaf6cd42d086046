#include "common/tls_certificate.h"

#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <ctime>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"

namespace ibgraphrag::common {
namespace {

struct BioFree {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
struct X509Free {
  void operator()(X509* cert) const { X509_free(cert); }
};

absl::StatusOr<absl::Time> ToTime(const ASN1_TIME* asn1, absl::string_view field) {
  std::tm tm{};
  if (asn1 == nullptr || ASN1_TIME_to_tm(asn1, &tm) != 1) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": certificate has an unreadable date"));
  }
  return absl::FromTM(tm, absl::UTCTimeZone());
}

}  // namespace

absl::StatusOr<CertificateValidity> ReadCertificateValidity(absl::string_view pem,
                                                            absl::string_view field) {
  std::unique_ptr<BIO, BioFree> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (bio == nullptr) return absl::ResourceExhaustedError("BIO_new_mem_buf failed");
  // The _AUX reader is the one gRPC loads the served chain with: it also takes a leaf written as
  // "TRUSTED CERTIFICATE".
  std::unique_ptr<X509, X509Free> cert(PEM_read_bio_X509_AUX(bio.get(), nullptr, nullptr, nullptr));
  if (cert == nullptr) {
    ERR_clear_error();  // leave no stale error for the next OpenSSL user on this thread
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": no PEM certificate could be parsed from the file"));
  }
  CertificateValidity validity;
  absl::StatusOr<absl::Time> not_before = ToTime(X509_get0_notBefore(cert.get()), field);
  if (!not_before.ok()) return not_before.status();
  absl::StatusOr<absl::Time> not_after = ToTime(X509_get0_notAfter(cert.get()), field);
  if (!not_after.ok()) return not_after.status();
  validity.not_before = *not_before;
  validity.not_after = *not_after;
  return validity;
}

absl::Status CheckCertificateDates(const CertificateValidity& validity, absl::Time now,
                                   absl::string_view field) {
  if (now > validity.not_after) {
    return absl::FailedPreconditionError(absl::StrCat(
        field, ": the certificate expired at ", FormatCertificateTime(validity.not_after),
        "; every client would refuse the handshake, so the server does not start "
        "(renew the certificate)"));
  }
  if (now + kCertificateClockSkew < validity.not_before) {
    return absl::FailedPreconditionError(absl::StrCat(
        field, ": the certificate is not valid before ", FormatCertificateTime(validity.not_before),
        "; every client would refuse the handshake (check the clock or the "
        "certificate)"));
  }
  return absl::OkStatus();
}

std::string FormatCertificateTime(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone());
}

}  // namespace ibgraphrag::common
