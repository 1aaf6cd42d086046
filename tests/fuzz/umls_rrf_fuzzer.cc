// The UMLS RRF import of the alignment lexicon (ImportUmlsRrf, services/alignment/lexicon.h),
// on a small lexicon whose entries carry "UMLS:<CUI>" xrefs. UMLS itself is licensed and not in
// ../shared/data, so the seeds are the rows of lexicon_test's UMLS test.
//
// Input: the first byte sets the options (bit 0 skip_suppressed, bit 1
// definitions_only_when_missing, bits 2-4 max_synonyms_per_entry - 1) and bit 5 leaves
// MRCONSO.RRF out (NOT_FOUND); the rest splits at NUL bytes into MRCONSO.RRF, MRDEF.RRF and
// MRSTY.RRF (MRDEF and MRSTY are absent when the input has no part for them).
//
// Invariants: OK or a clean error; after an import every entry keeps its identity, holds no
// duplicate names and at most max_synonyms_per_entry synonyms, and keeps a definition it had when
// definitions_only_when_missing is set.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/string_view.h"
#include "common/test_util/temp_dir.h"
#include "services/alignment/lexicon.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

namespace alignment = ::ibgraphrag::alignment;
using ::ibgraphrag::fuzz::Check;
using ::ibgraphrag::fuzz::CheckCleanError;

alignment::LexiconEntry Entry(uint32_t id, std::string external_id, std::string name,
                              std::vector<std::string> xrefs, std::string definition) {
  alignment::LexiconEntry e;
  e.kg_id = id;
  e.external_id = std::move(external_id);
  e.type = "disease";
  e.name = std::move(name);
  e.xrefs = std::move(xrefs);
  e.definition = std::move(definition);
  return e;
}

// Asthma and COPD joined through xrefs, diabetes through its own external id, one entry without
// any UMLS id.
alignment::Lexicon SmallLexicon() {
  alignment::Lexicon lexicon;
  lexicon.entries = {
      Entry(0, "DOID:3083", "chronic obstructive pulmonary disease", {"UMLS:C0024117"}, ""),
      Entry(1, "DOID:2841", "asthma", {"UMLS:C0004096", "MESH:D001249"}, "A bronchial disease."),
      Entry(2, "UMLS:C0011860", "type 2 diabetes mellitus", {}, ""),
      Entry(3, "HP:0000103", "Polyuria", {}, "")};
  lexicon.entries[1].synonyms = {"bronchial asthma"};
  lexicon.source = "fuzz";
  return lexicon;
}

// Writes the RRF files of this input into `dir` (removing the ones it has no part for, and
// MRCONSO.RRF with `without_mrconso`).
void WriteRrfFiles(const std::string& dir, absl::string_view body, bool without_mrconso) {
  static const char* const kNames[] = {"MRCONSO.RRF", "MRDEF.RRF", "MRSTY.RRF"};
  std::vector<absl::string_view> parts;
  for (size_t start = 0; parts.size() < 3 && start <= body.size();) {
    const size_t end = std::min(body.find('\0', start), body.size());
    parts.push_back(body.substr(start, end - start));
    start = end + 1;
  }
  for (size_t i = 0; i < 3; ++i) {
    const std::string path = dir + "/" + kNames[i];
    if (i < parts.size() && !(i == 0 && without_mrconso)) {
      ibgraphrag::fuzz::WriteFileOrAbort(path, parts[i]);
    } else {
      unlink(path.c_str());
    }
  }
}

void CheckImported(const alignment::Lexicon& before, const alignment::Lexicon& after,
                   const alignment::UmlsImportOptions& options) {
  Check(after.entries.size() == before.entries.size(), "the UMLS import added or removed entries");
  for (size_t i = 0; i < after.entries.size(); ++i) {
    const alignment::LexiconEntry& a = after.entries[i];
    const alignment::LexiconEntry& b = before.entries[i];
    Check(a.kg_id == b.kg_id && a.external_id == b.external_id && a.name == b.name,
          "the UMLS import changed an entry's identity");
    Check(static_cast<int>(a.synonyms.size()) <=
              std::max<int>(options.max_synonyms_per_entry, b.synonyms.size()),
          "more synonyms than max_synonyms_per_entry");
    std::set<std::string> names;
    for (const std::string& name : a.AllNames()) {
      Check(!name.empty(), "the UMLS import added an empty name");
      Check(names.insert(name).second, "the UMLS import added a duplicate name: " + name);
    }
    if (options.definitions_only_when_missing && !b.definition.empty()) {
      Check(a.definition == b.definition, "an existing definition was replaced");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static ibgraphrag::common::test_util::ScratchDir dir("fuzz_umls_rrf");
  if (size == 0) return 0;
  alignment::UmlsImportOptions options;
  options.rrf_dir = dir.path();
  options.skip_suppressed = (data[0] & 1) != 0;
  options.definitions_only_when_missing = (data[0] & 2) != 0;
  options.max_synonyms_per_entry = 1 + ((data[0] >> 2) & 7);
  const bool without_mrconso = (data[0] & 32) != 0;
  WriteRrfFiles(dir.path(), absl::string_view(reinterpret_cast<const char*>(data + 1), size - 1),
                without_mrconso);

  const alignment::Lexicon before = SmallLexicon();
  alignment::Lexicon lexicon = before;
  const absl::StatusOr<alignment::UmlsImportReport> report =
      alignment::ImportUmlsRrf(options, &lexicon);
  if (!report.ok()) {
    CheckCleanError(report.status(), "ImportUmlsRrf");
    return 0;
  }
  Check(!without_mrconso, "ImportUmlsRrf succeeded without MRCONSO.RRF");
  Check(report->rows_skipped <= report->mrconso_rows + report->mrdef_rows + report->mrsty_rows,
        "more rows skipped than read");
  Check(report->cuis_joined <= 3, "more CUIs joined than the lexicon has");
  CheckImported(before, lexicon, options);
  return 0;
}
