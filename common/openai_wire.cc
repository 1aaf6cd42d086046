#include "common/openai_wire.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"

namespace ibgraphrag::common {
namespace {

using Json = nlohmann::json;

// Parses without exceptions (STYLE.md §3): a discarded value means malformed input.
Json ParseJson(absl::string_view text) {
  return Json::parse(text.begin(), text.end(), /*cb=*/nullptr, /*allow_exceptions=*/false);
}

const Json* Member(const Json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

std::string StringMember(const Json& object, const char* key) {
  const Json* value = Member(object, key);
  return value != nullptr && value->is_string() ? value->get<std::string>() : std::string();
}

int IntMember(const Json& object, const char* key) {
  const Json* value = Member(object, key);
  return value != nullptr && value->is_number_integer() ? value->get<int>() : -1;
}

void UpdateUsage(const Json& chunk, ChatResponse* response) {
  const Json* usage = Member(chunk, "usage");
  if (usage == nullptr || !usage->is_object()) return;
  response->prompt_tokens = IntMember(*usage, "prompt_tokens");
  response->completion_tokens = IntMember(*usage, "completion_tokens");
}

// Applies one chat.completion.chunk: model, usage, the first choice's content delta and its
// finish_reason. True when a non-empty content delta was delivered.
bool ApplyChunk(const Json& chunk, const TokenCallback* on_token, ChatResponse* response) {
  if (std::string model = StringMember(chunk, "model"); !model.empty()) {
    response->model = std::move(model);
  }
  UpdateUsage(chunk, response);
  const Json* choices = Member(chunk, "choices");
  if (choices == nullptr || !choices->is_array() || choices->empty()) return false;
  const Json& choice = (*choices)[0];
  bool delivered = false;
  if (const Json* delta = Member(choice, "delta")) {
    const Json* content = Member(*delta, "content");
    if (content != nullptr && content->is_string()) {
      const std::string& text = content->get_ref<const std::string&>();
      if (!text.empty()) {
        response->content += text;
        if (on_token != nullptr && *on_token) (*on_token)(text);
        delivered = true;
      }
    }
  }
  if (std::string reason = StringMember(choice, "finish_reason"); !reason.empty()) {
    response->finish_reason = std::move(reason);
  }
  return delivered;
}

// One "data" item of an embeddings answer: its index (the position when absent) and vector.
absl::Status ParseEmbeddingItem(absl::string_view backend, const Json& item, size_t position,
                                std::vector<std::vector<float>>* vectors) {
  const size_t count = vectors->size();
  const Json* index_json = Member(item, "index");
  size_t index = position;
  if (index_json != nullptr) {
    index = index_json->is_number_unsigned() ? index_json->get<size_t>() : count;
  }
  if (index >= count || !(*vectors)[index].empty()) {
    return absl::DataLossError(absl::StrCat(
        "backend '", backend, "' returned embeddings with a bad index at data[", position, "]"));
  }
  const Json* embedding = Member(item, "embedding");
  if (embedding == nullptr || !embedding->is_array() || embedding->empty()) {
    return absl::DataLossError(absl::StrCat("backend '", backend, "' returned data[", position,
                                            "] without an embedding array"));
  }
  std::vector<float>& vector = (*vectors)[index];
  vector.reserve(embedding->size());
  for (const Json& value : *embedding) {
    if (!value.is_number()) {
      return absl::DataLossError(absl::StrCat("backend '", backend, "' returned data[", position,
                                              "] with a non-numeric embedding value"));
    }
    vector.push_back(value.get<float>());
  }
  return absl::OkStatus();
}

}  // namespace

std::string TruncateForStatus(absl::string_view text, size_t limit) {
  if (text.size() <= limit) return std::string(text);
  return absl::StrCat(text.substr(0, limit), "...");
}

std::string ServerErrorMessage(absl::string_view body) {
  Json json = ParseJson(body);
  if (json.is_discarded() || !json.is_object()) return "";
  if (const Json* error = Member(json, "error")) {
    if (error->is_string())
      return TruncateForStatus(error->get<std::string>(), kMaxQuotedErrorBytes);
    std::string message = StringMember(*error, "message");
    if (!message.empty()) return TruncateForStatus(message, kMaxQuotedErrorBytes);
  }
  std::string detail = StringMember(json, "detail");
  return TruncateForStatus(detail, kMaxQuotedErrorBytes);
}

bool SseParser::Feed(absl::string_view bytes) {
  buffer_.append(bytes.data(), bytes.size());
  size_t start = 0;
  size_t newline;
  while ((newline = buffer_.find('\n', start)) != std::string::npos) {
    absl::string_view line(buffer_.data() + start, newline - start);
    if (absl::EndsWith(line, "\r")) line.remove_suffix(1);
    start = newline + 1;
    if (!HandleLine(line)) return false;
  }
  buffer_.erase(0, start);
  return true;
}

bool SseParser::Finish() {
  if (!buffer_.empty()) {
    std::string rest = std::move(buffer_);
    buffer_.clear();
    if (!HandleLine(absl::StripSuffix(rest, "\r"))) return false;
  }
  return Dispatch();
}

bool SseParser::HandleLine(absl::string_view line) {
  if (line.empty()) return Dispatch();
  if (line.front() == ':') return true;  // SSE comment / keep-alive
  if (absl::ConsumePrefix(&line, "data:")) {
    absl::ConsumePrefix(&line, " ");
    if (has_data_) data_.push_back('\n');
    data_.append(line.data(), line.size());
    has_data_ = true;
  }
  return true;  // "event:", "id:", "retry:" carry nothing we use
}

bool SseParser::Dispatch() {
  if (!has_data_) return true;
  has_data_ = false;
  std::string payload = std::move(data_);
  data_.clear();
  if (done_) return true;
  if (absl::StripAsciiWhitespace(payload) == "[DONE]") {
    done_ = true;
    return true;
  }
  Json chunk = ParseJson(payload);
  if (chunk.is_discarded() || !chunk.is_object()) {
    status_ = absl::InternalError(absl::StrCat("backend '", backend_,
                                               "' sent a malformed stream event: "
                                               "expected a JSON object after 'data:'"));
    return false;
  }
  if (const Json* error = Member(chunk, "error")) {
    std::string message =
        error->is_string() ? error->get<std::string>() : StringMember(*error, "message");
    status_ = absl::UnavailableError(absl::StrCat(
        "backend '", backend_,
        "' reported an error mid-stream: ", TruncateForStatus(message, kMaxQuotedErrorBytes)));
    return false;
  }
  if (ApplyChunk(chunk, on_token_, response_)) delivered_tokens_ = true;
  return true;
}

absl::StatusOr<ChatResponse> ParseCompletionBody(absl::string_view backend,
                                                 absl::string_view body) {
  Json json = ParseJson(body);
  if (json.is_discarded()) {
    return absl::InternalError(absl::StrCat("backend '", backend, "' returned malformed JSON (",
                                            body.size(), " bytes that do not parse as JSON)"));
  }
  const Json* choices = Member(json, "choices");
  if (choices == nullptr || !choices->is_array() || choices->empty()) {
    return absl::InternalError(absl::StrCat("backend '", backend,
                                            "' returned JSON without choices[0] (not an "
                                            "OpenAI chat completion)"));
  }
  const Json& choice = (*choices)[0];
  const Json* message = Member(choice, "message");
  const Json* content = message != nullptr ? Member(*message, "content") : nullptr;
  if (content == nullptr || !(content->is_string() || content->is_null())) {
    return absl::InternalError(absl::StrCat("backend '", backend,
                                            "' returned JSON without a string "
                                            "choices[0].message.content"));
  }
  ChatResponse response;
  if (content->is_string()) response.content = content->get<std::string>();
  response.finish_reason = StringMember(choice, "finish_reason");
  response.model = StringMember(json, "model");
  UpdateUsage(json, &response);
  return response;
}

absl::StatusOr<EmbeddingsResponse> ParseEmbeddingsBody(absl::string_view backend,
                                                       absl::string_view body, size_t input_count) {
  Json json = ParseJson(body);
  if (json.is_discarded()) {
    return absl::DataLossError(absl::StrCat("backend '", backend, "' returned malformed JSON (",
                                            body.size(), " bytes that do not parse as JSON)"));
  }
  const Json* data = Member(json, "data");
  if (data == nullptr || !data->is_array() || data->size() != input_count) {
    return absl::DataLossError(absl::StrCat("backend '", backend, "' returned ",
                                            data != nullptr && data->is_array() ? data->size() : 0,
                                            " embeddings for ", input_count, " inputs"));
  }
  EmbeddingsResponse response;
  response.vectors.resize(input_count);
  for (size_t i = 0; i < data->size(); ++i) {
    IBGR_RETURN_IF_ERROR(ParseEmbeddingItem(backend, (*data)[i], i, &response.vectors));
  }
  response.model = StringMember(json, "model");
  return response;
}

}  // namespace ibgraphrag::common
