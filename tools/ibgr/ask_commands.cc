#include "tools/ibgr/ask_commands.h"

#include <cstdio>
#include <cstdlib>
#include <tuple>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "grpcpp/client_context.h"
#include "tools/eval/answer_format.h"
#include "tools/eval/command_line.h"
#include "tools/ibgr/cli_common.h"

// Shared with `ibgr align` (same meaning for MSCA) and `ibgr kg subgraph` (hops).
ABSL_DECLARE_FLAG(int, top_k);
ABSL_DECLARE_FLAG(double, lambda);
ABSL_DECLARE_FLAG(double, tau);
ABSL_DECLARE_FLAG(bool, msca);
ABSL_DECLARE_FLAG(bool, json);
ABSL_DECLARE_FLAG(int, hops);

ABSL_FLAG(std::string, gateway, "127.0.0.1:50051", "ask/eval: gateway address host:port");
ABSL_FLAG(std::string, option, "",
          "ask: an answer option; repeat the flag for each (--option=A --option=B)");
ABSL_FLAG(std::string, task, "auto",
          "ask: auto | mcq | fact | open (auto: mcq with options; without, fact for a yes/no "
          "question such as \"Can atorvastatin cause rhabdomyolysis?\", open otherwise)");
ABSL_FLAG(bool, ibrp, true, "ask/eval: IBRP scoring on (false = shortest-path prior only)");
ABSL_FLAG(std::string, scorer, "",
          "ask/eval: retriever scorer variant with IBRP on: residual or plain (the paper's MLP); "
          "empty = the retriever's default");
ABSL_FLAG(std::string, backend, "", "ask/eval: reasoner backend (default: the gateway's)");
ABSL_FLAG(std::string, mode, "",
          "ask/eval: retrieval/reasoning mode, PipelineOptions.mode (ibgraphrag, kg_rank, kg_rag, "
          "give or illama; "
          "default: ibgraphrag; docs/modes.md)");
ABSL_FLAG(int64_t, deadline_ms, 30000, "ask/eval: deadline of each call in milliseconds");
ABSL_FLAG(bool, stream, false, "ask: use AnswerStream and print stages and tokens as they come");
ABSL_FLAG(std::string, api_key, "",
          "ask/eval: API key sent as a bearer token (default $IBGR_API_KEY; never printed)");
ABSL_FLAG(std::string, kg_rank_reranker, "",
          "ask/eval --mode=kg_rank: what re-ranks the selection, encoder (the baseline's own) or "
          "ibrp (the hybrid with IBGraphRAG's scorer); empty = the gateway's (encoder)");
ABSL_FLAG(std::string, illama_reranker, "",
          "ask/eval --mode=illama: what re-ranks the dense documents, encoder (the baseline's own) "
          "or ibrp (the hybrid with IBGraphRAG's scorer); empty = the gateway's (encoder)");
ABSL_FLAG(double, kg_rag_min_similarity, 0.3,
          "ask/eval --mode=kg_rag: minimum cosine of a context sentence to the query, [-1, 1] "
          "(PipelineOptions.kg_rag_minimum_similarity; unset: the gateway's)");
ABSL_FLAG(bool, intent, true,
          "ask/eval: read the question's intent (relation, answer type, constraint) and let it "
          "shape retrieval and the extractive answer (false = topic neighbourhood, as before)");
ABSL_FLAG(std::string, relation, "",
          "ask: override the question's intent: comma list of relation kinds (treats, palliates, "
          "side_effect, symptom, gene, target, is_a, drug_class, anatomy, pathway, "
          "contraindication, interaction, expression)");
ABSL_FLAG(std::string, answer_type, "",
          "ask: override the intent's answer entity types, comma list (compound, gene, disease, "
          "symptom, phenotype, side_effect, anatomy, pathway, ...)");
ABSL_FLAG(int, show_evidence, 10, "ask: evidence triples to list");
ABSL_FLAG(int, show_paths, 5, "ask: reasoning paths to list");

namespace ibgraphrag::cli {
namespace {

namespace pb = ::ibgraphrag::v1;

constexpr char kAskUsage[] =
    "usage: ibgr ask [--gateway=127.0.0.1:50051] [--option=TEXT ...] "
    "[--task=auto|mcq|fact|open]\n"
    "                [--top_k=N (evidence triples, 1..1000)] [--msca=true|false] "
    "[--ibrp=true|false] [--scorer=residual|plain]\n"
    "                [--backend=NAME] [--lambda=X --tau=X] [--hops=N] [--deadline_ms=30000]\n"
    "                [--intent=true|false] [--relation=KIND,...] [--answer_type=TYPE,...]\n"
    "                [--stream] [--json] [--tls_ca=PEM] [--api_key=KEY] \"question\"\n"
    "Pipeline switches not given are left to the gateway's defaults (top_k 100, MSCA and IBRP "
    "on).";

int Usage(const std::string& problem) {
  if (!problem.empty()) std::fprintf(stderr, "ibgr ask: %s\n", problem.c_str());
  std::fprintf(stderr, "%s\n", kAskUsage);
  return 2;
}

// Whether `name` was given: from the raw command line (so that `--top_k=<default>` still counts),
// else, where the command line cannot be read, whether its value differs from the default.
bool Given(const char* name) {
  static const std::vector<std::string>* argv =
      new std::vector<std::string>(eval::ProcessCommandLine());
  if (!argv->empty()) return eval::FlagGiven(*argv, name);
  const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
  return flag != nullptr && flag->CurrentValue() != flag->DefaultValue();
}

std::vector<std::string> Options() {
  const std::vector<std::string> argv = eval::ProcessCommandLine();
  if (!argv.empty()) return eval::FlagValues(argv, "option");
  const std::string single = absl::GetFlag(FLAGS_option);
  return single.empty() ? std::vector<std::string>() : std::vector<std::string>{single};
}

absl::StatusOr<pb::Task> TaskFromFlag() {
  const std::string task = absl::GetFlag(FLAGS_task);
  if (task == "auto") return pb::TASK_UNSPECIFIED;
  if (task == "mcq") return pb::TASK_MULTIPLE_CHOICE;
  if (task == "fact") return pb::TASK_FACT_VERIFICATION;
  if (task == "open") return pb::TASK_OPEN;
  return absl::InvalidArgumentError(
      absl::StrCat("--task: one of auto, mcq, fact, open; got \"", task, "\""));
}

std::string RequestIdOf(const grpc::ClientContext& context) {
  for (const auto* metadata :
       {&context.GetServerInitialMetadata(), &context.GetServerTrailingMetadata()}) {
    auto it = metadata->find("x-request-id");
    if (it != metadata->end()) return std::string(it->second.data(), it->second.size());
  }
  return "";
}

int RpcFailed(const grpc::Status& status, const grpc::ClientContext& context) {
  std::fprintf(stderr, "error: %s: %s\n",
               absl::StatusCodeToString(static_cast<absl::StatusCode>(status.error_code())).c_str(),
               status.error_message().c_str());
  const std::string request_id = RequestIdOf(context);
  if (!request_id.empty()) std::fprintf(stderr, "request id: %s\n", request_id.c_str());
  return 1;
}

int PrintResponse(const pb::AnswerResponse& response) {
  if (absl::GetFlag(FLAGS_json)) {
    auto json = eval::MessageToJson(response, /*pretty=*/true);
    if (!json.ok()) {
      std::fprintf(stderr, "error: %s\n", json.status().ToString().c_str());
      return 1;
    }
    std::fputs(json->c_str(), stdout);
    return 0;
  }
  eval::AnswerFormatOptions options;
  options.max_evidence = absl::GetFlag(FLAGS_show_evidence);
  options.max_paths = absl::GetFlag(FLAGS_show_paths);
  std::fputs(eval::FormatAnswerText(response, options).c_str(), stdout);
  return 0;
}

int AskStream(pb::GatewayService::Stub& stub, grpc::ClientContext& context,
              const pb::AnswerRequest& request) {
  pb::AnswerStreamRequest stream_request;
  *stream_request.mutable_request() = request;
  auto reader = stub.AnswerStream(&context, stream_request);
  pb::AnswerStreamResponse message;
  pb::AnswerResponse result;
  bool have_result = false;
  bool in_tokens = false;
  const bool json = absl::GetFlag(FLAGS_json);
  while (reader->Read(&message)) {
    if (json) {
      // One JSON object per line, as the messages arrive.
      auto line = eval::MessageToJson(message, /*pretty=*/false);
      if (line.ok()) std::printf("%s\n", line->c_str());
      std::fflush(stdout);
      continue;
    }
    switch (message.event_case()) {
      case pb::AnswerStreamResponse::kStage:
        if (in_tokens) std::printf("\n");
        in_tokens = false;
        std::printf("%s\n", eval::FormatStageEvent(message.stage()).c_str());
        break;
      case pb::AnswerStreamResponse::kToken:
        if (!in_tokens) std::printf("[llm] ");
        in_tokens = true;
        std::fputs(message.token().c_str(), stdout);
        break;
      case pb::AnswerStreamResponse::kResult:
        result = message.result();
        have_result = true;
        break;
      case pb::AnswerStreamResponse::EVENT_NOT_SET:
        break;
    }
    std::fflush(stdout);
  }
  const grpc::Status status = reader->Finish();
  if (!status.ok()) {
    if (in_tokens) std::printf("\n");
    return RpcFailed(status, context);
  }
  if (json) return 0;
  if (in_tokens) std::printf("\n");
  if (!have_result) {
    std::fprintf(stderr, "error: the stream ended without a result\n");
    return 1;
  }
  std::printf("\n");
  return PrintResponse(result);
}

}  // namespace

absl::StatusOr<eval::PipelineConfig> PipelineFromFlags() {
  eval::PipelineConfig config;
  if (Given("top_k")) {
    const int top_k = absl::GetFlag(FLAGS_top_k);
    if (top_k < 1 || top_k > 1000) {
      return absl::InvalidArgumentError(
          absl::StrCat("--top_k: evidence triples must be in [1, 1000], got ", top_k));
    }
    config.top_k = static_cast<uint32_t>(top_k);
  }
  if (Given("msca")) config.msca = absl::GetFlag(FLAGS_msca);
  if (Given("ibrp")) config.ibrp = absl::GetFlag(FLAGS_ibrp);
  if (Given("scorer")) {
    config.scorer = absl::GetFlag(FLAGS_scorer);
    if (config.scorer != "residual" && config.scorer != "plain") {
      return absl::InvalidArgumentError(
          absl::StrCat("--scorer: \"", config.scorer, "\" is not residual or plain"));
    }
  }
  for (const auto& [name, value, field] :
       {std::tuple{"lambda", absl::GetFlag(FLAGS_lambda), &config.lambda},
        std::tuple{"tau", absl::GetFlag(FLAGS_tau), &config.tau}}) {
    if (!Given(name)) continue;
    if (!(value >= 0 && value <= 1)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", name, ": must be in [0, 1], got ", value));
    }
    *field = static_cast<float>(value);
  }
  if (Given("hops")) {
    const int hops = absl::GetFlag(FLAGS_hops);
    if (hops < 1 || hops > 4) {
      return absl::InvalidArgumentError(absl::StrCat("--hops: must be in [1, 4], got ", hops));
    }
    config.max_hops = static_cast<uint32_t>(hops);
  }
  config.backend = absl::GetFlag(FLAGS_backend);
  config.mode = absl::GetFlag(FLAGS_mode);
  if (Given("intent")) config.intent = absl::GetFlag(FLAGS_intent);
  config.kg_rank_reranker = absl::GetFlag(FLAGS_kg_rank_reranker);
  config.illama_reranker = absl::GetFlag(FLAGS_illama_reranker);
  for (const auto& [flag, value] : {std::pair<absl::string_view, const std::string*>{
                                        "--kg_rank_reranker", &config.kg_rank_reranker},
                                    std::pair<absl::string_view, const std::string*>{
                                        "--illama_reranker", &config.illama_reranker}}) {
    if (!value->empty() && *value != "encoder" && *value != "ibrp") {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, ": \"", *value, "\" is not encoder or ibrp"));
    }
  }
  if (Given("kg_rag_min_similarity")) {
    const double value = absl::GetFlag(FLAGS_kg_rag_min_similarity);
    if (!(value >= -1 && value <= 1)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--kg_rag_min_similarity: must be in [-1, 1], got ", value));
    }
    config.kg_rag_minimum_similarity = static_cast<float>(value);
  }
  return config;
}

std::string ApiKeyFromFlags() {
  std::string key = absl::GetFlag(FLAGS_api_key);
  if (key.empty()) {
    if (const char* env = std::getenv("IBGR_API_KEY"); env != nullptr) key = env;
  }
  return key;
}

absl::StatusOr<std::unique_ptr<v1::GatewayService::Stub>> GatewayStubFromFlags() {
  const std::string target = absl::GetFlag(FLAGS_gateway);
  if (target.empty()) return absl::InvalidArgumentError("--gateway: address required");
  auto channel = ChannelTo(target);
  if (!channel.ok()) return channel.status();
  return v1::GatewayService::NewStub(*channel);
}

absl::StatusOr<absl::Duration> DeadlineFromFlags() {
  const int64_t ms = absl::GetFlag(FLAGS_deadline_ms);
  if (ms <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("--deadline_ms: must be > 0, got ", ms));
  }
  return absl::Milliseconds(ms);
}

std::string RedactedCommandLineForReports() {
  return eval::RedactedCommandLine(eval::ProcessCommandLine(), {"api_key"});
}

int Ask(const std::vector<std::string>& args) {
  const std::string question = absl::StrJoin(args, " ");
  if (question.empty()) return Usage("the question is missing");
  pb::AnswerRequest request;
  request.set_question(question);
  for (const std::string& option : Options()) request.add_options(option);
  auto task = TaskFromFlag();
  if (!task.ok()) return Usage(std::string(task.status().message()));
  request.set_task(*task);
  auto pipeline = PipelineFromFlags();
  if (!pipeline.ok()) return Usage(std::string(pipeline.status().message()));
  pipeline->ApplyTo(request.mutable_pipeline());
  for (absl::string_view kind :
       absl::StrSplit(absl::GetFlag(FLAGS_relation), ',', absl::SkipEmpty())) {
    request.mutable_intent()->add_relation_kinds(std::string(kind));
  }
  for (absl::string_view type :
       absl::StrSplit(absl::GetFlag(FLAGS_answer_type), ',', absl::SkipEmpty())) {
    request.mutable_intent()->add_answer_types(std::string(type));
  }
  auto deadline = DeadlineFromFlags();
  if (!deadline.ok()) return Usage(std::string(deadline.status().message()));
  auto stub = GatewayStubFromFlags();
  if (!stub.ok()) {
    std::fprintf(stderr, "error: %s\n", stub.status().ToString().c_str());
    return 1;
  }
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + *deadline));
  eval::AddApiKey(&context, ApiKeyFromFlags());
  if (absl::GetFlag(FLAGS_stream)) return AskStream(**stub, context, request);
  pb::AnswerResponse response;
  const grpc::Status status = (*stub)->Answer(&context, request, &response);
  if (!status.ok()) return RpcFailed(status, context);
  return PrintResponse(response);
}

}  // namespace ibgraphrag::cli
