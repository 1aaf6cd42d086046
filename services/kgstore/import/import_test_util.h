// Helpers shared by the importer tests: where the real data lives and scratch files.
#ifndef IBGRAPHRAG_SERVICES_KGSTORE_IMPORT_IMPORT_TEST_UTIL_H_
#define IBGRAPHRAG_SERVICES_KGSTORE_IMPORT_IMPORT_TEST_UTIL_H_

#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/test_util/temp_dir.h"
#include "gtest/gtest.h"
#include "services/kgstore/kg_types.h"

namespace ibgraphrag::kgstore::import_::testing_util {

// IBGR_DATA_DIR (set by ctest), else ../shared/data beside the source tree.
inline std::string DataDir() {
  if (const char* env = std::getenv("IBGR_DATA_DIR"); env != nullptr && *env != '\0') return env;
  if (const char* src = std::getenv("IBGR_SOURCE_DIR"); src != nullptr && *src != '\0') {
    return absl::StrCat(src, "/../shared/data");
  }
  return "../shared/data";
}

inline std::string DataFile(const std::string& relative) {
  return absl::StrCat(DataDir(), "/", relative);
}

// A path, unique to the running test, in this process's scratch folder.
inline std::string TempPath(const std::string& name) {
  static const std::string* const dir =
      new std::string(common::test_util::MakeTempDir("kgstore-import"));
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return absl::StrCat(*dir, "/", info->test_suite_name(), "_", info->name(), "_", name);
}

inline void WriteFile(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  ASSERT_TRUE(out.good()) << path;
}

inline void WriteGzipFile(const std::string& path, const std::string& content) {
  gzFile file = gzopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr) << path;
  ASSERT_EQ(gzwrite(file, content.data(), static_cast<unsigned>(content.size())),
            static_cast<int>(content.size()));
  ASSERT_EQ(gzclose(file), Z_OK);
}

// The file's bytes; fails the current test (and returns "") when it cannot be read.
inline std::string ReadFile(const std::string& path) {
  absl::StatusOr<std::string> content = common::ReadFileToString(path);
  EXPECT_TRUE(content.ok()) << content.status();
  return content.ok() ? *std::move(content) : std::string();
}

// The first `lines` lines of a (plain) file, each with its newline.
inline std::string HeadLines(const std::string& path, int lines) {
  std::ifstream in(path);
  std::string out, line;
  for (int i = 0; i < lines && std::getline(in, line); ++i) absl::StrAppend(&out, line, "\n");
  return out;
}

// Index into kg.triples of (head, relation, tail) named by external ids (canonical or alias) and
// relation name, or -1 when the graph lacks it.
inline int64_t FindTriple(const KgData& kg, const std::string& head, const std::string& relation,
                          const std::string& tail) {
  auto entity = [&](const std::string& id) -> int64_t {
    for (const Entity& e : kg.entities) {
      if (e.external_id == id) return e.id;
      for (const std::string& xref : e.xrefs) {
        if (xref == id) return e.id;
      }
    }
    return -1;
  };
  const int64_t h = entity(head), t = entity(tail);
  for (size_t i = 0; i < kg.triples.size(); ++i) {
    const Triple& triple = kg.triples[i];
    if (triple.head == h && triple.tail == t && kg.relations[triple.relation].name == relation) {
      return static_cast<int64_t>(i);
    }
  }
  return -1;
}

// Names and licences of the sources that asserted kg.triples[i].
inline std::vector<std::string> TripleSources(const KgData& kg, int64_t i) {
  std::vector<std::string> out;
  for (const SourceId s : kg.provenance[kg.triples[i].provenance]) {
    out.push_back(absl::StrCat(kg.sources[s].name, " (", kg.sources[s].license, ")"));
  }
  return out;
}

// The report of `source`, or nullptr.
inline const SourceReport* FindReport(const KgData& kg, const std::string& source) {
  for (const SourceReport& r : kg.reports) {
    if (r.source == source) return &r;
  }
  return nullptr;
}

}  // namespace ibgraphrag::kgstore::import_::testing_util

#endif  // IBGRAPHRAG_SERVICES_KGSTORE_IMPORT_IMPORT_TEST_UTIL_H_
