// Helpers shared by the fuzz targets: a check that aborts with a message (libFuzzer keeps the
// input as a crash), the JSON round-trip invariant of manifests, and a scratch file for the
// parsers that only read from a path.
#ifndef IBGRAPHRAG_TESTS_FUZZ_FUZZ_UTIL_H_
#define IBGRAPHRAG_TESTS_FUZZ_FUZZ_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ibgraphrag::fuzz {

// Aborts (a libFuzzer finding) with `what` when `condition` is false. Invariants are checked in
// every build, NDEBUG or not.
void Check(bool condition, absl::string_view what);

// Aborts when `status` is not OK, naming `what` and the status.
void CheckOk(const absl::Status& status, absl::string_view what);

// Aborts when `status` is OK or of a code a parser of outside input must not return
// (INTERNAL, UNKNOWN: they mean a bug, not bad input).
void CheckCleanError(const absl::Status& status, absl::string_view what);

// A file holding `bytes` under $TEST_TMPDIR (or /dev/shm, else /tmp), one per process and
// suffix, overwritten for every input. Aborts when it cannot be written.
const std::string& WriteScratchFile(const uint8_t* data, size_t size, absl::string_view suffix);

// Writes `bytes` to `path` (no fsync: scratch files are rewritten for every input). Aborts when it
// cannot.
void WriteFileOrAbort(const std::string& path, absl::string_view bytes);

// Checks that a parsed value survives its own serialisation: ToJson(FromJson(ToJson(v))) ==
// ToJson(v). `to_json` and `from_json` are the manifest's pair.
template <typename T, typename ToJson, typename FromJson>
void CheckJsonRoundTrip(const T& value, ToJson to_json, FromJson from_json,
                        absl::string_view what) {
  const std::string first = to_json(value);
  auto reparsed = from_json(first);
  CheckOk(reparsed.status(), what);
  Check(to_json(*reparsed) == first, what);
}

}  // namespace ibgraphrag::fuzz

#endif  // IBGRAPHRAG_TESTS_FUZZ_FUZZ_UTIL_H_
