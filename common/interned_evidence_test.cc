#include "common/interned_evidence.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "common/config.h"
#include "common/test_util/status_matchers.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace ibgraphrag::common {
namespace {

namespace pb = ::ibgraphrag::v1;
using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::HasSubstr;

pb::EvidenceTriple Parse(const std::string& text) {
  pb::EvidenceTriple t;
  EXPECT_OK(ParseTextProto(text, "expected triple", &t));
  return t;
}

void FillRef(uint32_t id, pb::EntityRef* ref) {
  ref->set_external_id(absl::StrCat("X:", id));
  ref->set_name(absl::StrCat("entity ", id));
  ref->set_type(id == 1 ? "disease" : "compound");
}

// Three triples around one hub with one relation and two sources: the hub, the relation and
// each (source, licence) pair are stored once.
pb::InternedEvidence HubEvidence() {
  pb::InternedEvidence out;
  EvidenceInterner interner(&out);
  const uint32_t hub = 1;
  for (uint32_t drug : {7u, 8u, 9u}) {
    pb::InternedTriple* t = interner.AddTriple();
    t->set_head(interner.Entity(drug, [&](pb::EntityRef* ref) { FillRef(drug, ref); }));
    t->set_tail(interner.Entity(hub, [&](pb::EntityRef* ref) { FillRef(hub, ref); }));
    t->set_relation(interner.Relation(3, "drug treats disease", "A drug treats a disease."));
    t->add_sources(interner.Source("hetionet", "CC0"));
    if (drug != 8) t->add_sources(interner.Source("drugcentral", "CC BY-SA 4.0"));
    if (drug == 9) t->set_source_score(0.5f);
    t->set_source_note(drug == 7 ? "phase 4" : "");
    t->set_score(1.0f / static_cast<float>(drug));
    t->set_hop(1);
  }
  return out;
}

TEST(InternedEvidenceTest, StoresEachEntityRelationAndSourceOnce) {
  const pb::InternedEvidence evidence = HubEvidence();
  EXPECT_EQ(evidence.triples_size(), 3);
  EXPECT_EQ(evidence.entities_size(), 4);  // three drugs and the hub
  EXPECT_EQ(evidence.relations_size(), 1);
  EXPECT_EQ(evidence.sources_size(), 2);
  EXPECT_EQ(evidence.triples(2).tail(), evidence.triples(0).tail());
}

TEST(InternedEvidenceTest, ExpandsToTheFullTriples) {
  google::protobuf::RepeatedPtrField<pb::EvidenceTriple> out;
  ASSERT_OK(ExpandInternedEvidence(HubEvidence(), &out));
  ASSERT_EQ(out.size(), 3);
  const std::string hub =
      R"(tail { id: 1 external_id: "X:1" name: "entity 1" type: "disease" }
         relation: "drug treats disease" relation_description: "A drug treats a disease."
         hop: 1 )";
  const pb::EvidenceTriple want[] = {
      Parse(hub + R"(head { id: 7 external_id: "X:7" name: "entity 7" type: "compound" }
                     score: 0.142857149 source: "hetionet" sources: "hetionet"
                     sources: "drugcentral" licenses: "CC0" licenses: "CC BY-SA 4.0"
                     source_note: "phase 4")"),
      Parse(hub + R"(head { id: 8 external_id: "X:8" name: "entity 8" type: "compound" }
                     score: 0.125 source: "hetionet" sources: "hetionet" licenses: "CC0")"),
      Parse(hub + R"(head { id: 9 external_id: "X:9" name: "entity 9" type: "compound" }
                     score: 0.111111112 source: "hetionet" sources: "hetionet"
                     sources: "drugcentral" licenses: "CC0" licenses: "CC BY-SA 4.0"
                     source_score: 0.5)"),
  };
  for (int i = 0; i < 3; ++i) {
    std::string diff;
    google::protobuf::util::MessageDifferencer differ;
    differ.ReportDifferencesToString(&diff);
    EXPECT_TRUE(differ.Compare(want[i], out[i])) << "triple " << i << ": " << diff;
  }
  EXPECT_FALSE(out[0].has_source_score());  // unset stays unset, not 0
}

TEST(InternedEvidenceTest, ATripleWithoutSourcesHasNoSource) {
  pb::InternedEvidence in;
  EvidenceInterner interner(&in);
  pb::InternedTriple* t = interner.AddTriple();
  t->set_head(interner.Entity(4, [](pb::EntityRef*) {}));
  t->set_tail(interner.Entity(5, [](pb::EntityRef*) {}));
  t->set_relation(interner.Relation(0, "", ""));
  google::protobuf::RepeatedPtrField<pb::EvidenceTriple> out;
  ASSERT_OK(ExpandInternedEvidence(in, &out));
  ASSERT_EQ(out.size(), 1);
  EXPECT_EQ(out[0].source(), "");
  EXPECT_EQ(out[0].sources_size(), 0);
  EXPECT_EQ(out[0].head().id(), 4u);
  EXPECT_EQ(out[0].tail().id(), 5u);
}

// A malformed response names the field and the limit, and appends nothing.
TEST(InternedEvidenceTest, RejectsIndicesOutOfRangeAndAppendsNothing) {
  google::protobuf::RepeatedPtrField<pb::EvidenceTriple> out;
  out.Add()->set_relation("kept");
  {
    pb::InternedEvidence in = HubEvidence();
    in.mutable_triples(2)->set_head(250);
    EXPECT_THAT(ExpandInternedEvidence(in, &out),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("interned_evidence.triples[2].head: 250 is out of range (4 "
                                   "entities)")));
  }
  {
    pb::InternedEvidence in = HubEvidence();
    in.mutable_triples(0)->set_tail(4);
    EXPECT_THAT(ExpandInternedEvidence(in, &out),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("triples[0].tail: 4")));
  }
  {
    pb::InternedEvidence in = HubEvidence();
    in.mutable_triples(1)->set_relation(1);
    EXPECT_THAT(ExpandInternedEvidence(in, &out),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("triples[1].relation: 1 is out of range (1 relations)")));
  }
  {
    pb::InternedEvidence in = HubEvidence();
    in.mutable_triples(0)->set_sources(1, 2);
    EXPECT_THAT(ExpandInternedEvidence(in, &out),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("triples[0].sources[1]: 2 is out of range (2 sources)")));
  }
  {
    pb::InternedEvidence in = HubEvidence();
    in.mutable_licenses()->RemoveLast();
    EXPECT_THAT(ExpandInternedEvidence(in, &out),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("interned_evidence.licenses: 1 entries for 2 sources")));
  }
  {
    pb::InternedEvidence in = HubEvidence();
    in.add_relation_descriptions("extra");
    EXPECT_THAT(ExpandInternedEvidence(in, &out),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("relation_descriptions: 2 entries for 1 relations")));
  }
  ASSERT_EQ(out.size(), 1);
  EXPECT_EQ(out[0].relation(), "kept");
}

}  // namespace
}  // namespace ibgraphrag::common
