// What the gateway does with a remote retriever's interned evidence (common/interned_evidence.h):
// the fuzz bytes as a binary ibgraphrag.v1.InternedEvidence, expanded after one triple already
// in place. Refused: INVALID_ARGUMENT naming an interned_evidence field, and nothing appended.
// Accepted: one EvidenceTriple per interned triple, in order, each naming the entities, relation
// and (source, licence) pairs its indices point at.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "common/interned_evidence.h"
#include "google/protobuf/util/message_differencer.h"
#include "ibgraphrag/v1/retriever.pb.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

namespace pb = ::ibgraphrag::v1;
using google::protobuf::util::MessageDifferencer;
using ibgraphrag::fuzz::Check;

void CheckExpanded(const pb::InternedEvidence& in, const pb::InternedTriple& t,
                   const pb::EvidenceTriple& e) {
  Check(MessageDifferencer::Equals(e.head(), in.entities(static_cast<int>(t.head()))),
        "a head is not the entity its index names");
  Check(MessageDifferencer::Equals(e.tail(), in.entities(static_cast<int>(t.tail()))),
        "a tail is not the entity its index names");
  Check(e.relation() == in.relations(static_cast<int>(t.relation())) &&
            e.relation_description() == in.relation_descriptions(static_cast<int>(t.relation())),
        "a relation is not the one its index names");
  Check(e.sources_size() == t.sources_size() && e.licenses_size() == t.sources_size(),
        "sources and licences are not one per source index");
  for (int k = 0; k < t.sources_size(); ++k) {
    const int s = static_cast<int>(t.sources(k));
    Check(e.sources(k) == in.sources(s) && e.licenses(k) == in.licenses(s),
          "a source or licence is not the pair its index names");
  }
  Check(e.source() == (t.sources_size() > 0 ? e.sources(0) : ""),
        "source is not the first of sources");
  Check(e.has_source_score() == t.has_source_score(), "source_score set where it was not");
  Check(e.source_note() == t.source_note() && e.hop() == t.hop(), "note or hop changed");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  pb::InternedEvidence in;
  if (!in.ParseFromArray(data, static_cast<int>(size))) return 0;
  google::protobuf::RepeatedPtrField<pb::EvidenceTriple> out;
  out.Add()->set_relation("already there");
  const absl::Status status = ibgraphrag::common::ExpandInternedEvidence(in, &out);
  if (!status.ok()) {
    Check(status.code() == absl::StatusCode::kInvalidArgument &&
              absl::StartsWith(status.message(), "interned_evidence."),
          "a refusal is not INVALID_ARGUMENT naming an interned_evidence field");
    Check(out.size() == 1 && out[0].relation() == "already there",
          "a refused expansion changed what was there");
    return 0;
  }
  Check(out.size() == 1 + in.triples_size(), "not one evidence triple per interned triple");
  for (int i = 0; i < in.triples_size(); ++i) CheckExpanded(in, in.triples(i), out[i + 1]);
  return 0;
}
