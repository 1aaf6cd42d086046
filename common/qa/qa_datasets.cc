#include "common/qa/qa_datasets.h"

#include <algorithm>
#include <filesystem>
#include <initializer_list>
#include <tuple>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/delimited_reader.h"
#include "common/file_util.h"
#include "nlohmann/json.hpp"

namespace ibgraphrag::eval {
namespace {

using Json = nlohmann::ordered_json;

constexpr absl::string_view kFormatNames[] = {"auto",      "medqa",  "medmcqa",
                                              "pubmedqa",  "mmlu",   "biomixqa_mcq",
                                              "truefalse", "lookup", "pubhealth"};

absl::Status LineError(const std::string& path, int line, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(path, ":", line, ": ", what));
}

// 1-based line of byte `offset` in `content`.
int LineOfOffset(absl::string_view content, size_t offset) {
  offset = std::min(offset, content.size());
  return 1 + static_cast<int>(std::count(content.begin(), content.begin() + offset, '\n'));
}

std::string Letter(size_t index) { return std::string(1, static_cast<char>('A' + index)); }

// A required non-empty string member of a JSON object.
absl::StatusOr<std::string> StringField(const Json& object, const char* key,
                                        const std::string& path, int line) {
  auto it = object.find(key);
  if (it == object.end()) return LineError(path, line, absl::StrCat("missing field \"", key, "\""));
  if (!it->is_string()) {
    return LineError(path, line, absl::StrCat("field \"", key, "\" must be a string"));
  }
  std::string value = it->get<std::string>();
  if (absl::StripAsciiWhitespace(value).empty()) {
    return LineError(path, line, absl::StrCat("field \"", key, "\" is empty"));
  }
  return value;
}

// Calls `parse_line(json, line)` for every non-blank line of a JSON-lines file.
template <typename ParseLine>
absl::StatusOr<std::vector<QaItem>> ParseJsonLines(absl::string_view content,
                                                   const std::string& path, ParseLine parse_line) {
  std::vector<QaItem> items;
  int line = 0;
  for (absl::string_view text : absl::StrSplit(content, '\n')) {
    ++line;
    if (absl::StripAsciiWhitespace(text).empty()) continue;
    Json json;
    try {
      json = Json::parse(text.begin(), text.end());
    } catch (const Json::exception& e) {
      return LineError(path, line, absl::StrCat("not valid JSON: ", e.what()));
    }
    if (!json.is_object()) return LineError(path, line, "expected a JSON object");
    absl::StatusOr<QaItem> item = parse_line(json, line);
    if (!item.ok()) return item.status();
    item->line = line;
    if (item->id.empty()) item->id = absl::StrCat("line:", line);
    items.push_back(*std::move(item));
  }
  if (items.empty()) return absl::InvalidArgumentError(absl::StrCat(path, ": no questions"));
  return items;
}

// A CSV file with a header line naming `columns`: its records (header first) and the index of
// each named column. INVALID_ARGUMENT at line 1 when a column is missing (`header_error`) and at
// the first data row whose width differs from the header's.
struct HeaderedCsv {
  std::vector<common::DelimitedRecord> records;
  std::vector<int> columns;
};

absl::StatusOr<HeaderedCsv> ParseHeaderedCsv(absl::string_view content, const std::string& path,
                                             std::initializer_list<absl::string_view> columns,
                                             absl::string_view header_error) {
  absl::StatusOr<std::vector<common::DelimitedRecord>> records =
      common::ParseDelimitedText(content, path);
  if (!records.ok()) return records.status();
  if (records->empty()) return absl::InvalidArgumentError(absl::StrCat(path, ": empty file"));
  HeaderedCsv csv;
  const std::vector<std::string>& header = records->front().fields;
  for (absl::string_view column : columns) {
    csv.columns.push_back(common::FindColumn(header, column));
    if (csv.columns.back() < 0) return LineError(path, 1, header_error);
  }
  for (size_t r = 1; r < records->size(); ++r) {
    const common::DelimitedRecord& record = (*records)[r];
    if (record.fields.size() != header.size()) {
      return LineError(
          path, record.line,
          absl::StrCat("expected ", header.size(), " columns, found ", record.fields.size()));
    }
  }
  csv.records = *std::move(records);
  return csv;
}

bool IsHeaderlessMmluRow(const std::vector<std::string>& fields) {
  if (fields.size() != 6) return false;
  const std::string answer(absl::StripAsciiWhitespace(fields[5]));
  return answer.size() == 1 && answer[0] >= 'A' && answer[0] <= 'D';
}

}  // namespace

absl::string_view DatasetFormatName(DatasetFormat format) {
  return kFormatNames[static_cast<int>(format)];
}

absl::StatusOr<DatasetFormat> ParseDatasetFormat(absl::string_view name) {
  for (size_t i = 0; i < std::size(kFormatNames); ++i) {
    if (kFormatNames[i] == name) return static_cast<DatasetFormat>(i);
  }
  return absl::InvalidArgumentError(absl::StrCat("--format: unknown format \"", name, "\"; one of ",
                                                 absl::StrJoin(kFormatNames, ", ")));
}

absl::StatusOr<std::vector<QaItem>> ParseLookup(absl::string_view content,
                                                const std::string& path) {
  return ParseJsonLines(content, path, [&](const Json& json, int line) -> absl::StatusOr<QaItem> {
    QaItem item;
    for (auto [field, out] :
         {std::pair{"question", &item.question}, std::pair{"relation", &item.relation},
          std::pair{"split", &item.file_split}}) {
      absl::StatusOr<std::string> value = StringField(json, field, path, line);
      if (!value.ok()) return value.status();
      *out = *std::move(value);
    }
    if (auto id = json.find("id"); id != json.end() && id->is_string()) {
      item.id = id->get<std::string>();
    }
    if (auto hub = json.find("hub"); hub != json.end() && hub->is_boolean()) {
      item.hub = hub->get<bool>();
    }
    if (auto type = json.find("answer_type"); type != json.end() && type->is_string()) {
      item.answer_type = type->get<std::string>();
    }
    auto accepted = json.find("accepted");
    if (accepted == json.end() || !accepted->is_array() || accepted->empty()) {
      return LineError(path, line, "field \"accepted\" must be a non-empty array of strings");
    }
    for (const Json& a : *accepted) {
      if (!a.is_string() || a.get<std::string>().empty()) {
        return LineError(path, line, "field \"accepted\" must hold non-empty strings");
      }
      item.accepted.push_back(absl::AsciiStrToLower(a.get<std::string>()));
    }
    absl::StatusOr<std::string> kind = StringField(json, "kind", path, line);
    if (!kind.ok()) return kind.status();
    if (*kind == "open") {
      item.task = v1::TASK_OPEN;
      item.gold_text = item.accepted.front();
      item.gold_is_entity = true;
    } else if (*kind == "multiple_choice") {
      item.task = v1::TASK_MULTIPLE_CHOICE;
      item.gold_is_entity = true;
      auto options = json.find("options");
      if (options == json.end() || !options->is_array() || options->size() < 2 ||
          options->size() > 26) {
        return LineError(path, line, "field \"options\" must be an array of 2..26 strings");
      }
      for (const Json& o : *options) {
        if (!o.is_string()) return LineError(path, line, "options must be strings");
        item.options.push_back(o.get<std::string>());
      }
      absl::StatusOr<std::string> letter = StringField(json, "answer", path, line);
      if (!letter.ok()) return letter.status();
      const int index = letter->size() == 1 ? (*letter)[0] - 'A' : -1;
      if (index < 0 || index >= static_cast<int>(item.options.size())) {
        return LineError(path, line,
                         absl::StrCat("answer \"", *letter, "\" is not an option letter"));
      }
      item.gold_index = index;
      item.gold_text = item.options[index];
    } else if (*kind == "yes_no") {
      item.task = v1::TASK_FACT_VERIFICATION;
      absl::StatusOr<std::string> answer = StringField(json, "answer", path, line);
      if (!answer.ok()) return answer.status();
      if (*answer != "yes" && *answer != "no") {
        return LineError(path, line, "a yes_no answer must be \"yes\" or \"no\"");
      }
      item.gold_label = *answer == "yes" ? v1::FACT_LABEL_SUPPORTED : v1::FACT_LABEL_REFUTED;
      item.gold_text = *answer == "yes" ? "true" : "false";
    } else {
      return LineError(path, line,
                       absl::StrCat("kind \"", *kind, "\" is not open, multiple_choice or yes_no"));
    }
    return item;
  });
}

namespace {
// FNV-1a: a hash that is the same on every platform and build, for deterministic choices.
uint64_t StableHash(absl::string_view text) {
  uint64_t h = 1469598103934665603ULL;
  for (const char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return h;
}

// Lower-case alphanumeric words, sorted and unique.
std::vector<std::string> NameWords(absl::string_view name) {
  std::vector<std::string> words;
  for (absl::string_view w : absl::StrSplit(name, absl::ByAnyChar(" -,/()'"), absl::SkipEmpty())) {
    words.push_back(absl::AsciiStrToLower(w));
  }
  std::sort(words.begin(), words.end());
  words.erase(std::unique(words.begin(), words.end()), words.end());
  return words;
}

// Whether one name's words all occur in the other's ("insulin" and "insulin glargine").
bool NamesOverlap(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  if (a.empty() || b.empty()) return false;
  const auto& [small, large] = a.size() <= b.size() ? std::tie(a, b) : std::tie(b, a);
  return std::includes(large.begin(), large.end(), small.begin(), small.end());
}
}  // namespace

std::vector<QaItem> LookupAsChoices(const std::vector<QaItem>& items, int per_question) {
  std::vector<QaItem> out;
  for (const QaItem& item : items) {
    if (item.task == v1::TASK_MULTIPLE_CHOICE) out.push_back(item);
  }
  for (const QaItem& item : items) {
    if (item.task != v1::TASK_OPEN || item.accepted.empty()) continue;
    std::vector<std::vector<std::string>> accepted_words;
    for (const std::string& a : item.accepted) accepted_words.push_back(NameWords(a));
    auto accepted_here = [&](const std::vector<std::string>& words) {
      return std::any_of(accepted_words.begin(), accepted_words.end(),
                         [&](const std::vector<std::string>& a) { return NamesOverlap(a, words); });
    };
    // Distractor pool: other open questions' answers of the same type and split, first seen once.
    std::vector<std::string> pool;
    std::vector<std::vector<std::string>> pool_words;
    for (const QaItem& other : items) {
      if (&other == &item || other.task != v1::TASK_OPEN || other.answer_type != item.answer_type ||
          other.file_split != item.file_split) {
        continue;
      }
      for (const std::string& a : other.accepted) {
        std::vector<std::string> words = NameWords(a);
        if (accepted_here(words)) continue;
        const bool seen = std::any_of(pool_words.begin(), pool_words.end(),
                                      [&](const auto& p) { return NamesOverlap(p, words); });
        if (seen) continue;
        pool.push_back(a);
        pool_words.push_back(std::move(words));
      }
    }
    if (pool.size() < 3) continue;
    const int n = static_cast<int>(item.accepted.size());
    std::vector<int> rights;
    for (int k = 0; k < per_question && k < n; ++k) {
      const int index = k * n / std::max(per_question, 1);
      if (std::find(rights.begin(), rights.end(), index) == rights.end()) rights.push_back(index);
    }
    for (size_t k = 0; k < rights.size(); ++k) {
      const std::string key = absl::StrCat(item.id, "/mc", k);
      std::vector<std::string> options;
      std::vector<size_t> taken;
      for (uint64_t salt = 0; options.size() < 3 && salt < 64; ++salt) {
        const size_t pick = StableHash(absl::StrCat(key, "#", salt)) % pool.size();
        if (std::find(taken.begin(), taken.end(), pick) != taken.end()) continue;
        taken.push_back(pick);
        options.push_back(pool[pick]);
      }
      if (options.size() < 3) continue;
      const std::string& right = item.accepted[rights[k]];
      const int gold = static_cast<int>(StableHash(key) % 4);
      options.insert(options.begin() + gold, right);
      QaItem choice = item;
      choice.id = key;
      choice.task = v1::TASK_MULTIPLE_CHOICE;
      choice.options = std::move(options);
      choice.gold_index = gold;
      choice.gold_text = right;
      choice.gold_is_entity = true;
      choice.accepted = {right};
      out.push_back(std::move(choice));
    }
  }
  return out;
}

absl::StatusOr<std::vector<QaItem>> ParseMedQa(absl::string_view content, const std::string& path) {
  return ParseJsonLines(content, path, [&](const Json& json, int line) -> absl::StatusOr<QaItem> {
    QaItem item;
    item.task = v1::TASK_MULTIPLE_CHOICE;
    item.gold_is_entity = true;
    absl::StatusOr<std::string> question = StringField(json, "question", path, line);
    if (!question.ok()) return question.status();
    item.question = *std::move(question);
    auto options = json.find("options");
    if (options == json.end()) return LineError(path, line, "missing field \"options\"");
    std::vector<std::string> letters;
    if (options->is_object()) {
      // Keyed by letter; ordered by letter so "A" is option 0 whatever the file order.
      std::vector<std::pair<std::string, std::string>> by_letter;
      for (auto it = options->begin(); it != options->end(); ++it) {
        if (!it.value().is_string()) {
          return LineError(path, line, absl::StrCat("option \"", it.key(), "\" must be a string"));
        }
        by_letter.emplace_back(it.key(), it.value().get<std::string>());
      }
      std::sort(by_letter.begin(), by_letter.end());
      for (auto& [letter, text] : by_letter) {
        letters.push_back(letter);
        item.options.push_back(std::move(text));
      }
    } else if (options->is_array()) {
      for (const Json& option : *options) {
        if (!option.is_string()) return LineError(path, line, "options must be strings");
        letters.push_back(Letter(item.options.size()));
        item.options.push_back(option.get<std::string>());
      }
    } else {
      return LineError(path, line, "field \"options\" must be an object or an array");
    }
    if (item.options.size() < 2 || item.options.size() > 26) {
      return LineError(path, line,
                       absl::StrCat("expected 2..26 options, found ", item.options.size()));
    }
    if (auto idx = json.find("answer_idx"); idx != json.end()) {
      if (!idx->is_string()) return LineError(path, line, "field \"answer_idx\" must be a string");
      const std::string letter = idx->get<std::string>();
      auto pos = std::find(letters.begin(), letters.end(), letter);
      if (pos == letters.end()) {
        return LineError(path, line,
                         absl::StrCat("answer_idx \"", letter, "\" is not one of the options"));
      }
      item.gold_index = static_cast<int>(pos - letters.begin());
    } else if (auto answer = json.find("answer"); answer != json.end() && answer->is_string()) {
      auto pos = std::find(item.options.begin(), item.options.end(), answer->get<std::string>());
      if (pos == item.options.end()) {
        return LineError(path, line, "field \"answer\" matches no option");
      }
      item.gold_index = static_cast<int>(pos - item.options.begin());
    } else {
      return LineError(path, line, "missing field \"answer_idx\" (or \"answer\")");
    }
    item.gold_text = item.options[item.gold_index];
    if (auto id = json.find("id"); id != json.end() && id->is_string()) item.id = *id;
    return item;
  });
}

absl::StatusOr<std::vector<QaItem>> ParseMedMcqa(absl::string_view content,
                                                 const std::string& path) {
  return ParseJsonLines(content, path, [&](const Json& json, int line) -> absl::StatusOr<QaItem> {
    QaItem item;
    item.task = v1::TASK_MULTIPLE_CHOICE;
    item.gold_is_entity = true;
    absl::StatusOr<std::string> question = StringField(json, "question", path, line);
    if (!question.ok()) return question.status();
    item.question = *std::move(question);
    for (const char* key : {"opa", "opb", "opc", "opd"}) {
      auto it = json.find(key);
      if (it == json.end() || !it->is_string()) {
        return LineError(path, line, absl::StrCat("missing string field \"", key, "\""));
      }
      item.options.push_back(it->get<std::string>());
    }
    auto cop = json.find("cop");
    if (cop == json.end() || !cop->is_number_integer()) {
      return LineError(path, line, "missing integer field \"cop\"");
    }
    const int64_t correct = cop->get<int64_t>();
    if (correct < 1 || correct > 4) {
      return LineError(path, line, absl::StrCat("cop must be 1..4 (1 = opa), got ", correct));
    }
    item.gold_index = static_cast<int>(correct - 1);
    item.gold_text = item.options[item.gold_index];
    if (auto id = json.find("id"); id != json.end() && id->is_string()) item.id = *id;
    // The expert explanation is optional (null or absent for about half of the dev set).
    if (auto exp = json.find("exp"); exp != json.end() && exp->is_string()) {
      item.explanation = *exp;
    }
    return item;
  });
}

absl::StatusOr<std::vector<QaItem>> ParsePubMedQa(absl::string_view content,
                                                  const std::string& path) {
  Json json;
  try {
    json = Json::parse(content.begin(), content.end());
  } catch (const Json::parse_error& e) {
    return LineError(path, LineOfOffset(content, e.byte),
                     absl::StrCat("not valid JSON: ", e.what()));
  } catch (const Json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not valid JSON: ", e.what()));
  }
  if (!json.is_object()) {
    return LineError(path, 1, "expected a JSON object of id -> {QUESTION, final_decision}");
  }
  static const std::vector<std::string> kOptions = {"yes", "no", "maybe"};
  std::vector<QaItem> items;
  size_t search_from = 0;
  for (auto it = json.begin(); it != json.end(); ++it) {
    // The entry's line: where its quoted key appears (entries are searched in file order).
    const size_t at = content.find(absl::StrCat("\"", it.key(), "\""), search_from);
    const int line = at == absl::string_view::npos ? 0 : LineOfOffset(content, at);
    if (at != absl::string_view::npos) search_from = at + 1;
    if (!it.value().is_object()) {
      return LineError(path, line, absl::StrCat("entry \"", it.key(), "\" is not an object"));
    }
    QaItem item;
    item.id = it.key();
    item.line = line;
    item.task = v1::TASK_MULTIPLE_CHOICE;
    absl::StatusOr<std::string> question = StringField(it.value(), "QUESTION", path, line);
    if (!question.ok()) return question.status();
    item.question = *std::move(question);
    absl::StatusOr<std::string> decision = StringField(it.value(), "final_decision", path, line);
    if (!decision.ok()) return decision.status();
    auto pos = std::find(kOptions.begin(), kOptions.end(), absl::AsciiStrToLower(*decision));
    if (pos == kOptions.end()) {
      return LineError(
          path, line,
          absl::StrCat("final_decision must be yes, no or maybe, got \"", *decision, "\""));
    }
    item.options = kOptions;
    item.gold_index = static_cast<int>(pos - kOptions.begin());
    item.gold_text = *pos;
    items.push_back(std::move(item));
  }
  if (items.empty()) return absl::InvalidArgumentError(absl::StrCat(path, ": no questions"));
  return items;
}

absl::StatusOr<std::vector<QaItem>> ParseMmlu(absl::string_view content, const std::string& path) {
  absl::StatusOr<std::vector<common::DelimitedRecord>> records =
      common::ParseDelimitedText(content, path);
  if (!records.ok()) return records.status();
  std::vector<QaItem> items;
  for (common::DelimitedRecord& record : *records) {
    if (record.fields.size() != 6) {
      return LineError(path, record.line,
                       absl::StrCat("expected 6 columns (question, A, B, C, D, answer), found ",
                                    record.fields.size()));
    }
    const std::string answer(absl::StripAsciiWhitespace(record.fields[5]));
    if (answer.size() != 1 || answer[0] < 'A' || answer[0] > 'D') {
      return LineError(path, record.line,
                       absl::StrCat("answer must be a letter A..D, got \"", answer, "\""));
    }
    if (absl::StripAsciiWhitespace(record.fields[0]).empty()) {
      return LineError(path, record.line, "question is empty");
    }
    QaItem item;
    item.id = absl::StrCat("line:", record.line);
    item.line = record.line;
    item.task = v1::TASK_MULTIPLE_CHOICE;
    item.gold_is_entity = true;
    item.question = std::move(record.fields[0]);
    for (int i = 1; i <= 4; ++i) item.options.push_back(std::move(record.fields[i]));
    item.gold_index = answer[0] - 'A';
    item.gold_text = item.options[item.gold_index];
    items.push_back(std::move(item));
  }
  if (items.empty()) return absl::InvalidArgumentError(absl::StrCat(path, ": no questions"));
  return items;
}

absl::StatusOr<std::vector<QaItem>> ParseBiomixMcq(absl::string_view content,
                                                   const std::string& path) {
  absl::StatusOr<HeaderedCsv> csv =
      ParseHeaderedCsv(content, path, {"correct_node", "options_combined", "text"},
                       "header must name the columns correct_node, options_combined, text");
  if (!csv.ok()) return csv.status();
  const int gold_col = csv->columns[0];
  const int options_col = csv->columns[1];
  const int text_col = csv->columns[2];
  std::vector<QaItem> items;
  for (size_t r = 1; r < csv->records.size(); ++r) {
    common::DelimitedRecord& record = csv->records[r];
    QaItem item;
    item.id = absl::StrCat("line:", record.line);
    item.line = record.line;
    item.task = v1::TASK_MULTIPLE_CHOICE;
    item.gold_is_entity = true;
    item.question = record.fields[text_col];
    if (absl::StripAsciiWhitespace(item.question).empty()) {
      return LineError(path, record.line, "column text is empty");
    }
    for (absl::string_view option : absl::StrSplit(record.fields[options_col], ',')) {
      option = absl::StripAsciiWhitespace(option);
      if (!option.empty()) item.options.emplace_back(option);
    }
    const std::string gold(absl::StripAsciiWhitespace(record.fields[gold_col]));
    auto pos = std::find(item.options.begin(), item.options.end(), gold);
    if (pos == item.options.end()) {
      return LineError(path, record.line,
                       absl::StrCat("correct_node \"", gold, "\" is not in options_combined"));
    }
    if (item.options.size() < 2 || item.options.size() > 26) {
      return LineError(path, record.line,
                       absl::StrCat("expected 2..26 options, found ", item.options.size()));
    }
    item.gold_index = static_cast<int>(pos - item.options.begin());
    item.gold_text = gold;
    items.push_back(std::move(item));
  }
  if (items.empty()) return absl::InvalidArgumentError(absl::StrCat(path, ": no questions"));
  return items;
}

namespace {
// A verdict label of a claim CSV, lower case, and the gold label it stands for.
struct ClaimLabel {
  absl::string_view name;
  v1::FactLabel gold;
};

// Claims in a CSV whose header names `text_column` and "label": TASK_FACT_VERIFICATION items,
// gold from `labels` (compared in lower case; gold_text the lower-case label), id the first
// column when the claim is elsewhere and it is non-empty, else "line:N". `labels_text` names the
// accepted labels in errors; `nothing` is what an empty file has none of.
absl::StatusOr<std::vector<QaItem>> ParseClaimCsv(absl::string_view content,
                                                  const std::string& path,
                                                  absl::string_view text_column,
                                                  std::initializer_list<ClaimLabel> labels,
                                                  absl::string_view labels_text,
                                                  absl::string_view nothing) {
  absl::StatusOr<HeaderedCsv> csv =
      ParseHeaderedCsv(content, path, {text_column, "label"},
                       absl::StrCat("header must name the columns ", text_column, " and label"));
  if (!csv.ok()) return csv.status();
  const int text_col = csv->columns[0];
  const int label_col = csv->columns[1];
  std::vector<QaItem> items;
  for (size_t r = 1; r < csv->records.size(); ++r) {
    common::DelimitedRecord& record = csv->records[r];
    QaItem item;
    item.line = record.line;
    item.id = (text_col != 0 && !record.fields[0].empty()) ? record.fields[0]
                                                           : absl::StrCat("line:", record.line);
    item.task = v1::TASK_FACT_VERIFICATION;
    item.question = record.fields[text_col];
    if (absl::StripAsciiWhitespace(item.question).empty()) {
      return LineError(path, record.line, absl::StrCat("column ", text_column, " is empty"));
    }
    const std::string label =
        absl::AsciiStrToLower(absl::StripAsciiWhitespace(record.fields[label_col]));
    const auto known = std::find_if(labels.begin(), labels.end(),
                                    [&](const ClaimLabel& l) { return l.name == label; });
    if (known == labels.end()) {
      return LineError(
          path, record.line,
          absl::StrCat("label must be ", labels_text, ", got \"", record.fields[label_col], "\""));
    }
    item.gold_label = known->gold;
    item.gold_text = label;
    items.push_back(std::move(item));
  }
  if (items.empty()) return absl::InvalidArgumentError(absl::StrCat(path, ": no ", nothing));
  return items;
}
}  // namespace

absl::StatusOr<std::vector<QaItem>> ParseTrueFalse(absl::string_view content,
                                                   const std::string& path) {
  return ParseClaimCsv(content, path, "text",
                       {{"true", v1::FACT_LABEL_SUPPORTED}, {"false", v1::FACT_LABEL_REFUTED}},
                       "True or False", "questions");
}

absl::StatusOr<std::vector<QaItem>> ParsePubHealth(absl::string_view content,
                                                   const std::string& path) {
  absl::StatusOr<std::vector<QaItem>> items =
      ParseClaimCsv(content, path, "claim",
                    {{"true", v1::FACT_LABEL_SUPPORTED},
                     {"false", v1::FACT_LABEL_REFUTED},
                     {"mixture", v1::FACT_LABEL_UNKNOWN},
                     {"unproven", v1::FACT_LABEL_UNKNOWN}},
                    "true, false, mixture or unproven", "claims");
  if (!items.ok()) return items;
  const std::string stem = std::filesystem::path(path).stem().string();
  const std::string file_split = absl::EndsWith(stem, "-train")  ? "train"
                                 : absl::EndsWith(stem, "-dev")  ? "dev"
                                 : absl::EndsWith(stem, "-test") ? "test"
                                                                 : "";
  for (QaItem& item : *items) item.file_split = file_split;
  return items;
}

absl::StatusOr<DatasetFormat> DetectDatasetFormat(const std::string& path,
                                                  absl::string_view content) {
  auto unknown = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": cannot detect the dataset format (", why,
        "); pass --format=medqa|medmcqa|pubmedqa|mmlu|biomixqa_mcq|truefalse|lookup|pubhealth"));
  };
  if (absl::EndsWith(path, ".jsonl")) {
    int line = 0;
    for (absl::string_view text : absl::StrSplit(content, '\n')) {
      ++line;
      if (absl::StripAsciiWhitespace(text).empty()) continue;
      Json json;
      try {
        json = Json::parse(text.begin(), text.end());
      } catch (const Json::exception& e) {
        return LineError(path, line, absl::StrCat("not valid JSON: ", e.what()));
      }
      if (json.is_object() && json.contains("kind") && json.contains("accepted")) {
        return DatasetFormat::kLookup;
      }
      if (json.is_object() && json.contains("cop") && json.contains("opa")) {
        return DatasetFormat::kMedMcqa;
      }
      if (json.is_object() && json.contains("options") &&
          (json.contains("answer_idx") || json.contains("answer"))) {
        return DatasetFormat::kMedQa;
      }
      return unknown(absl::StrCat("line ", line,
                                  " has neither cop/opa (MedMCQA) nor options/answer_idx (MedQA)"));
    }
    return unknown("no records");
  }
  if (absl::EndsWith(path, ".json")) {
    const absl::string_view body = absl::StripLeadingAsciiWhitespace(content);
    if (!body.empty() && body.front() == '{' && absl::StrContains(body, "\"QUESTION\"")) {
      return DatasetFormat::kPubMedQa;
    }
    return unknown("a .json file must be PubMedQA's id -> {QUESTION, final_decision} object");
  }
  if (absl::EndsWith(path, ".csv")) {
    absl::StatusOr<std::vector<common::DelimitedRecord>> records =
        common::ParseDelimitedText(content, path);
    if (!records.ok()) return records.status();
    if (records->empty()) return unknown("no CSV records");
    const std::vector<std::string>& first = records->front().fields;
    if (common::FindColumn(first, "correct_node") >= 0) return DatasetFormat::kBiomixMcq;
    if (common::FindColumn(first, "text") >= 0 && common::FindColumn(first, "label") >= 0) {
      return DatasetFormat::kTrueFalse;
    }
    if (common::FindColumn(first, "claim") >= 0 && common::FindColumn(first, "label") >= 0) {
      return DatasetFormat::kPubHealth;
    }
    if (IsHeaderlessMmluRow(first)) return DatasetFormat::kMmlu;
    return unknown("line 1 is neither a BiomixQA header nor an MMLU row of 6 columns");
  }
  return unknown("expected a .jsonl, .json or .csv file");
}

absl::StatusOr<std::vector<std::string>> LoadQuestionTexts(const std::string& path,
                                                           DatasetFormat format) {
  absl::StatusOr<QaDataset> dataset = LoadDataset(path, format);
  if (!dataset.ok()) return dataset.status();
  if (dataset->items.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": no questions"));
  }
  std::vector<std::string> questions;
  questions.reserve(dataset->items.size());
  for (const auto& item : dataset->items) questions.push_back(item.question);
  return questions;
}

absl::StatusOr<QaDataset> LoadDataset(const std::string& path, DatasetFormat format) {
  absl::StatusOr<std::string> content = common::ReadFileToString(path);
  if (!content.ok()) return content.status();
  if (format == DatasetFormat::kAuto) {
    absl::StatusOr<DatasetFormat> detected = DetectDatasetFormat(path, *content);
    if (!detected.ok()) return detected.status();
    format = *detected;
  }
  QaDataset dataset;
  dataset.path = path;
  dataset.name = std::filesystem::path(path).stem().string();
  dataset.format = format;
  absl::StatusOr<std::vector<QaItem>> items;
  switch (format) {
    case DatasetFormat::kMedQa:
      items = ParseMedQa(*content, path);
      break;
    case DatasetFormat::kMedMcqa:
      items = ParseMedMcqa(*content, path);
      break;
    case DatasetFormat::kPubMedQa:
      items = ParsePubMedQa(*content, path);
      break;
    case DatasetFormat::kMmlu:
      items = ParseMmlu(*content, path);
      break;
    case DatasetFormat::kBiomixMcq:
      items = ParseBiomixMcq(*content, path);
      break;
    case DatasetFormat::kTrueFalse:
      items = ParseTrueFalse(*content, path);
      break;
    case DatasetFormat::kLookup:
      items = ParseLookup(*content, path);
      break;
    case DatasetFormat::kPubHealth:
      items = ParsePubHealth(*content, path);
      break;
    case DatasetFormat::kAuto:
      return absl::InternalError("format not resolved");
  }
  if (!items.ok()) return items.status();
  dataset.items = *std::move(items);
  return dataset;
}

absl::StatusOr<std::vector<std::string>> ExpandDatasetPaths(const std::string& spec) {
  std::vector<std::string> paths;
  for (absl::string_view part : absl::StrSplit(spec, ',', absl::SkipWhitespace())) {
    const std::string entry(absl::StripAsciiWhitespace(part));
    std::error_code ec;
    if (std::filesystem::is_directory(entry, ec)) {
      std::vector<std::string> found;
      for (const auto& file : std::filesystem::directory_iterator(entry, ec)) {
        const std::string name = file.path().string();
        if (file.is_regular_file(ec) &&
            (absl::EndsWith(name, ".jsonl") || absl::EndsWith(name, ".json") ||
             absl::EndsWith(name, ".csv"))) {
          found.push_back(name);
        }
      }
      if (ec) {
        return absl::NotFoundError(absl::StrCat("cannot list ", entry, ": ", ec.message()));
      }
      std::sort(found.begin(), found.end());
      if (found.empty()) {
        return absl::NotFoundError(absl::StrCat(entry, ": no .jsonl, .json or .csv files"));
      }
      paths.insert(paths.end(), found.begin(), found.end());
    } else if (std::filesystem::exists(entry, ec)) {
      paths.push_back(entry);
    } else {
      return absl::NotFoundError(absl::StrCat("--dataset: ", entry, " does not exist"));
    }
  }
  if (paths.empty()) return absl::InvalidArgumentError("--dataset: no file or directory given");
  return paths;
}

}  // namespace ibgraphrag::eval
