#include "services/alignment/eval/qa_sets.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace ibgraphrag::alignment::eval {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::vector<std::vector<std::string>> ParseCsv(const std::string& s) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (quoted) {
      if (c == '"' && i + 1 < s.size() && s[i + 1] == '"') {
        field.push_back('"');
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field.push_back(c);
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      row.push_back(std::move(field));
      field.clear();
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < s.size() && s[i + 1] == '\n') ++i;
      row.push_back(std::move(field));
      field.clear();
      rows.push_back(std::move(row));
      row.clear();
    } else {
      field.push_back(c);
    }
  }
  if (!field.empty() || !row.empty()) {
    row.push_back(std::move(field));
    rows.push_back(std::move(row));
  }
  return rows;
}

absl::StatusOr<std::vector<QuestionSet>> ReadQuestionSets(const std::string& data_dir) {
  namespace fs = std::filesystem;
  std::vector<QuestionSet> sets;
  const fs::path qa = fs::path(data_dir) / "qa";
  try {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(qa)) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& p : files) {
      const std::string name = p.stem().string();
      auto content = ReadFile(p.string());
      if (!content.ok()) return content.status();
      QuestionSet set;
      set.name = name;
      if (absl::EndsWith(p.string(), ".jsonl")) {
        std::istringstream in(*content);
        std::string line;
        while (std::getline(in, line)) {
          if (line.empty()) continue;
          set.questions.push_back(nlohmann::json::parse(line).at("question").get<std::string>());
        }
      } else if (absl::EndsWith(p.string(), ".json")) {
        const nlohmann::json j = nlohmann::json::parse(*content);
        for (const auto& [id, item] : j.items()) {
          set.questions.push_back(item.at("QUESTION").get<std::string>());
        }
      } else if (absl::StartsWith(name, "mmlu-")) {
        for (const auto& row : ParseCsv(*content)) {
          if (!row.empty() && !row[0].empty()) set.questions.push_back(row[0]);
        }
        set.name = name.substr(0, name.size() - 5);  // drop "-test"
      } else if (absl::StartsWith(name, "biomixqa")) {
        const auto rows = ParseCsv(*content);
        for (size_t i = 1; i < rows.size(); ++i) {
          if (rows[i].size() >= 2 && !rows[i][1].empty()) set.questions.push_back(rows[i][1]);
        }
      } else {
        continue;
      }
      sets.push_back(std::move(set));
    }
  } catch (const std::exception& e) {
    return absl::DataLossError(absl::StrCat(qa.string(), ": ", e.what()));
  }
  return sets;
}

}  // namespace ibgraphrag::alignment::eval
