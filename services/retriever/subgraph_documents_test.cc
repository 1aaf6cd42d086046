// ILlama's subgraph documents on the small hand-made KG: the artifact build (deterministic, round
// trip, corrupt files refused at load) and RetrieveDocuments over gRPC from the real retriever
// server (dense search by the model's encoder, trained-scorer re-ranking).
#include "services/retriever/subgraph_documents.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "common/file_util.h"
#include "common/proto_json.h"
#include "common/test_util/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ibgraphrag/v1/retriever.grpc.pb.h"
#include "services/kgstore/kg_store_test_util.h"
#include "services/retriever/alignment_embedder.h"
#include "services/retriever/retriever_server.h"
#include "services/retriever/retriever_test_util.h"

namespace ibgraphrag::retriever {
namespace {

namespace pb = ::ibgraphrag::v1;
namespace kt = kgstore::testing;
using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::HasSubstr;

constexpr int kDim = 32;

class SubgraphDocumentsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = kt::WriteAndOpen(kt::SmallKg(), dir_.path());
    ASSERT_NE(store_, nullptr);
  }
  absl::StatusOr<artifacts::v1::DocumentsManifest> Build(const std::string& base) {
    return BuildSubgraphDocuments(*store_, HashNgramEmbedder(kDim).value(), options_, base);
  }
  std::string VersionDir() const { return DocumentsArtifacts(dir_.path()).VersionDir(1); }

  kt::ScratchDir dir_;
  std::unique_ptr<kgstore::KgStore> store_;
  DocumentsBuildOptions options_;
};

// The encoder re-ranker embeds a request's sentences in one batch call: its rows are the
// one-text embeddings, in order, and an embedder without a batched form falls back to them.
TEST(TextEmbedderTest, EmbedBatchRowsAreTheOneTextEmbeddings) {
  absl::StatusOr<TextEmbedder> embedder = HashNgramEmbedder(64);
  ASSERT_OK(embedder);
  const std::vector<std::string> texts = {"Pioglitazone binds PPARG.", "",
                                          "Metformin treats "
                                          "diabetes."};
  const std::vector<float> batched = embedder->EmbedBatch(texts);
  TextEmbedder unbatched = *embedder;
  unbatched.embed_batch = nullptr;
  EXPECT_EQ(unbatched.EmbedBatch(texts), batched);
  ASSERT_EQ(batched.size(), texts.size() * 64);
  for (size_t i = 0; i < texts.size(); ++i) {
    const std::vector<float> one = embedder->embed(texts[i]);
    for (size_t k = 0; k < 64; ++k) EXPECT_FLOAT_EQ(batched[i * 64 + k], one[k]) << i << "," << k;
  }
}

TEST_F(SubgraphDocumentsTest, OneDocumentPerCentreTripleOfEachDisease) {
  auto manifest = Build(dir_.path());
  ASSERT_OK(manifest);
  // Diabetes has 7 edges, obesity 2, the isolated disease none: 9 centres.
  EXPECT_EQ(manifest->num_documents(), 9);
  EXPECT_EQ(manifest->version(), 1);
  EXPECT_EQ(manifest->kg_version(), "1");
  EXPECT_EQ(manifest->encoder_id(), HashNgramEmbedder(kDim)->id);
  EXPECT_EQ(manifest->file_sha256_size(), 5);

  auto docs = SubgraphDocuments::Load(VersionDir());
  ASSERT_OK(docs);
  ASSERT_EQ((*docs)->size(), 9);
  // Document 0: diabetes' first out edge as centre, its other edges and the far end's.
  const auto triples = (*docs)->Triples(0);
  ASSERT_GE(triples.size(), 2u);
  EXPECT_EQ(triples[0].head, kt::kDiabetes);
  EXPECT_LE(triples.size(), 1u + options_.max_neighbors);
  const std::string text = (*docs)->Text(0);
  EXPECT_TRUE(absl::StartsWith(text, "Type 2 diabetes mellitus associates ")) << text;
  EXPECT_THAT(text, HasSubstr("Pioglitazone treats type 2 diabetes mellitus."));
  EXPECT_EQ((*docs)->Entity(kt::kMetformin).external_id, "DrugBank:DB00331");
}

TEST_F(SubgraphDocumentsTest, BuildIsDeterministic) {
  auto first = Build(dir_.path() + "/a");
  auto second = Build(dir_.path() + "/b");
  ASSERT_OK(first);
  ASSERT_OK(second);
  for (const auto& [file, digest] : first->file_sha256()) {
    EXPECT_EQ(second->file_sha256().at(file), digest) << file;
  }
}

TEST_F(SubgraphDocumentsTest, CorruptIndexIsRefusedAtLoad) {
  ASSERT_OK(Build(dir_.path()));
  std::ofstream(VersionDir() + "/index.faiss", std::ios::binary | std::ios::trunc) << "garbage";
  auto docs = SubgraphDocuments::Load(VersionDir());
  ASSERT_THAT(docs, StatusIs(absl::StatusCode::kDataLoss, HasSubstr("index.faiss")));
}

// Rewrites the published manifest with `edit` applied (the loader must not trust it).
void EditManifest(const std::string& dir,
                  const std::function<void(artifacts::v1::DocumentsManifest*)>& edit) {
  artifacts::v1::DocumentsManifest manifest;
  auto json = common::ReadFileToString(dir + "/manifest.json");
  ASSERT_OK(json);
  ASSERT_OK(common::JsonToProto(*json, "manifest", &manifest));
  edit(&manifest);
  ASSERT_OK(common::WriteStringToFileAtomic(dir + "/manifest.json", common::ProtoToJson(manifest)));
}

TEST_F(SubgraphDocumentsTest, RowMapNamingNoDocumentIsRefusedEvenWithAMatchingHash) {
  ASSERT_OK(Build(dir_.path()));
  const std::string rows = VersionDir() + "/index_rows.bin";
  {
    // Row 0's document entry becomes 0xFFFFFFFF; the manifest is re-hashed to match.
    std::fstream file(rows, std::ios::binary | std::ios::in | std::ios::out);
    const char ones[4] = {'\xff', '\xff', '\xff', '\xff'};
    file.write(ones, 4);
  }
  EditManifest(VersionDir(), [&](artifacts::v1::DocumentsManifest* m) {
    (*m->mutable_file_sha256())["index_rows.bin"] = common::Sha256HexOfFile(rows).value();
  });
  auto docs = SubgraphDocuments::Load(VersionDir());
  ASSERT_THAT(docs, StatusIs(absl::StatusCode::kDataLoss,
                             HasSubstr("index_rows.bin: row 0 names document 4294967295")));
}

TEST_F(SubgraphDocumentsTest, ManifestMustHashExactlyTheArtifactsFiles) {
  ASSERT_OK(Build(dir_.path()));
  EditManifest(VersionDir(), [](artifacts::v1::DocumentsManifest* m) { m->clear_file_sha256(); });
  auto docs = SubgraphDocuments::Load(VersionDir());
  ASSERT_THAT(docs, StatusIs(absl::StatusCode::kDataLoss,
                             HasSubstr("file_sha256 has no entry for documents.tsv")));

  ASSERT_OK(Build(dir_.path() + "/b"));
  const std::string dir = DocumentsArtifacts(dir_.path() + "/b").VersionDir(1);
  // A key outside the version directory is never opened (/dev/zero would never finish hashing).
  EditManifest(dir, [](artifacts::v1::DocumentsManifest* m) {
    (*m->mutable_file_sha256())["../../../../../../dev/zero"] = "00";
  });
  docs = SubgraphDocuments::Load(dir);
  ASSERT_THAT(docs,
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("not a file of this artifact")));
}

TEST_F(SubgraphDocumentsTest, OutOfRangeDocumentHasNoTriples) {
  ASSERT_OK(Build(dir_.path()));
  auto docs = SubgraphDocuments::Load(VersionDir());
  ASSERT_OK(docs);
  EXPECT_TRUE((*docs)->Triples(0xFFFFFFFFu).empty());
  EXPECT_TRUE((*docs)->Triples(9).empty());
  EXPECT_EQ((*docs)->Text(0xFFFFFFFFu), "");
}

TEST_F(SubgraphDocumentsTest, BadOptionsNameTheField) {
  options_.centers_per_entity = 0;
  auto manifest = Build(dir_.path());
  EXPECT_THAT(manifest,
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("centers_per_entity")));
  options_.centers_per_entity = 8;
  options_.center_types = {"planet"};
  manifest = Build(dir_.path());
  EXPECT_THAT(manifest, StatusIs(absl::StatusCode::kFailedPrecondition));
}

// The real retriever server over the same KG, with a model and (optionally) the documents.
class RetrieveDocumentsTest : public SubgraphDocumentsTest {
 protected:
  void StartServer() {
    testing::PublishTestVersion(dir_.path(), kt::SmallKg(), kDim);
    RetrieverServer::Options options;
    options.server.listen_host = "127.0.0.1";
    options.server.port = 0;
    options.server.metrics_port = -1;
    options.base_path = dir_.path();
    options.device = "cpu";
    options.kg_store = std::shared_ptr<kgstore::KgStore>(std::move(store_));
    auto server = RetrieverServer::BuildAndStart(options);
    ASSERT_OK(server);
    server_ = *std::move(server);
    stub_ = pb::RetrieverService::NewStub(server_->InProcessChannel());
  }
  grpc::Status Call(const pb::RetrieveDocumentsRequest& request,
                    pb::RetrieveDocumentsResponse* response) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return stub_->RetrieveDocuments(&context, request, response);
  }

  std::unique_ptr<RetrieverServer> server_;
  std::unique_ptr<pb::RetrieverService::Stub> stub_;
};

TEST_F(RetrieveDocumentsTest, FindsTheDocumentOfTheQuestionsEntitiesAndReranks) {
  ASSERT_OK(Build(dir_.path()));
  StartServer();
  pb::RetrieveDocumentsRequest request;
  request.set_question("Does pioglitazone bind PPARG?");
  request.set_top_n(5);
  request.set_rerank_k(3);
  // The baseline's own re-ranker (the default): each document's best sentence under the encoder.
  pb::RetrieveDocumentsResponse by_encoder;
  grpc::Status status = Call(request, &by_encoder);
  ASSERT_OK(status);
  ASSERT_EQ(by_encoder.documents_size(), 3);
  EXPECT_EQ(by_encoder.reranked_by(), "encoder");
  EXPECT_EQ(by_encoder.model_version(), "1");
  EXPECT_EQ(by_encoder.documents_version(), "1");
  // The document whose sentence "Pioglitazone binds PPARG." restates the question ranks first.
  const pb::SubgraphDocument& best = by_encoder.documents(0);
  EXPECT_THAT(best.text(), HasSubstr("Pioglitazone binds PPARG."));
  ASSERT_GT(best.triples_size(), 1);
  EXPECT_EQ(best.triples(0).hop(), 1u);
  EXPECT_FALSE(best.triples(0).head().name().empty());
  for (int i = 1; i < by_encoder.documents_size(); ++i) {
    EXPECT_GE(by_encoder.documents(i - 1).rerank_score(), by_encoder.documents(i).rerank_score());
  }
  // A document's score is its best sentence's cosine, not the whole document's carried over.
  EXPECT_NE(best.rerank_score(), best.dense_score());
  EXPECT_LE(best.rerank_score(), 1.0001f);

  // The hybrid without topic entities: the trained scorer cannot run and says so.
  request.set_reranker("ibrp");
  pb::RetrieveDocumentsResponse dense;
  status = Call(request, &dense);
  ASSERT_OK(status);
  EXPECT_EQ(dense.reranked_by(), "dense (no topic entities for the trained scorer)");
  EXPECT_EQ(dense.model_version(), "");
  for (const pb::SubgraphDocument& document : dense.documents()) {
    EXPECT_EQ(document.rerank_score(), document.dense_score());
  }

  request.add_topic_entity_ids(kt::kPioglitazone);
  pb::RetrieveDocumentsResponse reranked;
  status = Call(request, &reranked);
  ASSERT_OK(status);
  EXPECT_EQ(reranked.reranked_by(), "trained_scorer");
  EXPECT_EQ(reranked.model_version(), "1");
  ASSERT_EQ(reranked.documents_size(), 3);
  for (int i = 0; i < reranked.documents_size(); ++i) {
    // The score is the trained scorer's, not the dense similarity carried over.
    EXPECT_NE(reranked.documents(i).rerank_score(), reranked.documents(i).dense_score()) << i;
    if (i > 0) {
      EXPECT_GE(reranked.documents(i - 1).rerank_score(), reranked.documents(i).rerank_score());
    }
  }
}

TEST_F(RetrieveDocumentsTest, DocumentsOfAnotherKgVersionKeepTheDenseOrderAndSayWhy) {
  ASSERT_OK(Build(dir_.path()));
  EditManifest(VersionDir(), [](artifacts::v1::DocumentsManifest* m) { m->set_kg_version("7"); });
  StartServer();
  pb::RetrieveDocumentsRequest request;
  request.set_question("Does pioglitazone bind PPARG?");
  request.set_top_n(5);
  request.set_rerank_k(3);
  request.set_reranker("ibrp");
  request.add_topic_entity_ids(kt::kPioglitazone);
  pb::RetrieveDocumentsResponse response;
  const grpc::Status status = Call(request, &response);
  ASSERT_OK(status);
  EXPECT_EQ(response.reranked_by(),
            "dense (documents built from KG 7, the model from KG 1 (rebuild: ibgr docs build))");
  EXPECT_EQ(response.model_version(), "");
  ASSERT_EQ(response.documents_size(), 3);
  for (const pb::SubgraphDocument& document : response.documents()) {
    EXPECT_EQ(document.rerank_score(), document.dense_score());
  }
}

TEST_F(RetrieveDocumentsTest, WithoutTheArtifactItIsFailedPrecondition) {
  StartServer();
  pb::RetrieveDocumentsRequest request;
  request.set_question("Does pioglitazone bind PPARG?");
  pb::RetrieveDocumentsResponse response;
  const grpc::Status status = Call(request, &response);
  EXPECT_THAT(status, StatusIs(grpc::StatusCode::FAILED_PRECONDITION,
                               HasSubstr("no documents artifact; run ibgr docs build")));
}

TEST_F(RetrieveDocumentsTest, LimitsAndEncoderMismatchAreNamed) {
  auto manifest =
      BuildSubgraphDocuments(*store_, HashNgramEmbedder(64).value(), options_, dir_.path());
  ASSERT_OK(manifest);
  StartServer();
  pb::RetrieveDocumentsRequest request;
  request.set_question("Does pioglitazone bind PPARG?");
  pb::RetrieveDocumentsResponse response;
  grpc::Status status = Call(request, &response);
  EXPECT_THAT(status, StatusIs(grpc::StatusCode::FAILED_PRECONDITION, HasSubstr("encoder")));
  request.set_top_n(5);
  request.set_rerank_k(6);
  status = Call(request, &response);
  EXPECT_THAT(status, StatusIs(grpc::StatusCode::INVALID_ARGUMENT, HasSubstr("rerank_k")));
  request.set_rerank_k(3);
  request.set_reranker("cross-encoder");
  status = Call(request, &response);
  EXPECT_THAT(status, StatusIs(grpc::StatusCode::INVALID_ARGUMENT,
                               HasSubstr("reranker: \"cross-encoder\" is not encoder or ibrp")));
}

}  // namespace
}  // namespace ibgraphrag::retriever
