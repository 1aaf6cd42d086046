#include "common/interned_evidence.h"

#include "absl/strings/str_cat.h"

namespace ibgraphrag::common {
namespace {

namespace pb = ::ibgraphrag::v1;

absl::Status OutOfRange(int triple, absl::string_view field, uint32_t index, int size,
                        absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("interned_evidence.triples[", triple, "].", field,
                                                 ": ", index, " is out of range (", size, " ", what,
                                                 ")"));
}

absl::Status CheckParallel(absl::string_view a, int a_size, absl::string_view b, int b_size) {
  if (a_size == b_size) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("interned_evidence.", b, ": ", b_size, " entries for ", a_size, " ", a));
}

// Every index of every triple in range, before anything is appended.
absl::Status Validate(const pb::InternedEvidence& in) {
  if (absl::Status s = CheckParallel("relations", in.relations_size(), "relation_descriptions",
                                     in.relation_descriptions_size());
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckParallel("sources", in.sources_size(), "licenses", in.licenses_size());
      !s.ok()) {
    return s;
  }
  const uint32_t entities = static_cast<uint32_t>(in.entities_size());
  for (int i = 0; i < in.triples_size(); ++i) {
    const pb::InternedTriple& t = in.triples(i);
    if (t.head() >= entities) {
      return OutOfRange(i, "head", t.head(), in.entities_size(), "entities");
    }
    if (t.tail() >= entities) {
      return OutOfRange(i, "tail", t.tail(), in.entities_size(), "entities");
    }
    if (t.relation() >= static_cast<uint32_t>(in.relations_size())) {
      return OutOfRange(i, "relation", t.relation(), in.relations_size(), "relations");
    }
    for (int k = 0; k < t.sources_size(); ++k) {
      if (t.sources(k) >= static_cast<uint32_t>(in.sources_size())) {
        return OutOfRange(i, absl::StrCat("sources[", k, "]"), t.sources(k), in.sources_size(),
                          "sources");
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

uint32_t EvidenceInterner::Relation(uint32_t id, absl::string_view name,
                                    absl::string_view description) {
  auto [it, added] = relations_.try_emplace(id, out_->relations_size());
  if (added) {
    out_->add_relations(std::string(name));
    out_->add_relation_descriptions(std::string(description));
  }
  return it->second;
}

uint32_t EvidenceInterner::Source(absl::string_view source, absl::string_view license) {
  auto [it, added] = sources_.try_emplace(std::make_pair(std::string(source), std::string(license)),
                                          out_->sources_size());
  if (added) {
    out_->add_sources(std::string(source));
    out_->add_licenses(std::string(license));
  }
  return it->second;
}

absl::Status ExpandInternedEvidence(const pb::InternedEvidence& in,
                                    google::protobuf::RepeatedPtrField<pb::EvidenceTriple>* out) {
  if (absl::Status s = Validate(in); !s.ok()) return s;
  out->Reserve(out->size() + in.triples_size());
  for (const pb::InternedTriple& t : in.triples()) {
    pb::EvidenceTriple* e = out->Add();
    if (t.sources_size() > 0) e->set_source(in.sources(static_cast<int>(t.sources(0))));
    for (uint32_t s : t.sources()) {
      e->add_sources(in.sources(static_cast<int>(s)));
      e->add_licenses(in.licenses(static_cast<int>(s)));
    }
    if (t.has_source_score()) e->set_source_score(t.source_score());
    e->set_source_note(t.source_note());
    *e->mutable_head() = in.entities(static_cast<int>(t.head()));
    *e->mutable_tail() = in.entities(static_cast<int>(t.tail()));
    e->set_relation(in.relations(static_cast<int>(t.relation())));
    e->set_relation_description(in.relation_descriptions(static_cast<int>(t.relation())));
    e->set_score(t.score());
    e->set_hop(t.hop());
  }
  return absl::OkStatus();
}

}  // namespace ibgraphrag::common
