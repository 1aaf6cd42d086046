// The interned layout of a RetrieveResponse's evidence (EVIDENCE_LAYOUT_INTERNED in
// protos/ibgraphrag/v1/retriever.proto): every entity, relation and (source, licence) pair once,
// the triples pointing at them by index.
//
// The 100 evidence triples of an answer name far fewer entities, relations and sources than they
// have slots for (a hub's triples all share the hub and usually one relation), so over the
// network the interned layout moves the same evidence in fewer bytes and far fewer strings to
// build, serialise, parse and free. The retriever builds it with EvidenceInterner; the gateway
// turns it back into EvidenceTriples with ExpandInternedEvidence. Expanding what the interner
// built gives exactly the triples the default layout carries (retriever_service_test checks it).
#ifndef IBGRAPHRAG_COMMON_INTERNED_EVIDENCE_H_
#define IBGRAPHRAG_COMMON_INTERNED_EVIDENCE_H_

#include <cstdint>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "ibgraphrag/v1/common.pb.h"
#include "ibgraphrag/v1/retriever.pb.h"

namespace ibgraphrag::common {

// Appends triples to one InternedEvidence, adding each entity (by id), relation (by id) and
// (source, licence) pair the first time a triple names it. Not thread-safe; `out` must outlive it.
class EvidenceInterner {
 public:
  explicit EvidenceInterner(ibgraphrag::v1::InternedEvidence* out) : out_(out) {}
  EvidenceInterner(const EvidenceInterner&) = delete;
  EvidenceInterner& operator=(const EvidenceInterner&) = delete;

  // The index of entity `id`; `fill` (called once, the first time) sets its EntityRef, whose id
  // this sets.
  template <typename Fill>
  uint32_t Entity(uint32_t id, Fill&& fill) {
    auto [it, added] = entities_.try_emplace(id, out_->entities_size());
    if (added) {
      ibgraphrag::v1::EntityRef* ref = out_->add_entities();
      ref->set_id(id);
      std::forward<Fill>(fill)(ref);
    }
    return it->second;
  }
  // The index of relation `id` with its name and description (read on first use only).
  uint32_t Relation(uint32_t id, absl::string_view name, absl::string_view description);
  // The index of the pair (source, licence).
  uint32_t Source(absl::string_view source, absl::string_view license);
  // A new triple, last in order; the caller sets its fields with the indices above.
  ibgraphrag::v1::InternedTriple* AddTriple() { return out_->add_triples(); }

 private:
  ibgraphrag::v1::InternedEvidence* out_;
  absl::flat_hash_map<uint32_t, uint32_t> entities_;
  absl::flat_hash_map<uint32_t, uint32_t> relations_;
  absl::flat_hash_map<std::pair<std::string, std::string>, uint32_t> sources_;
};

// Appends the EvidenceTriples that `interned` encodes to `out` (on out's arena, if any), in order.
// An index out of range or lists that should be parallel and are not is INVALID_ARGUMENT naming
// the field ("interned_evidence.triples[3].head: 250 is out of range (12 entities)"), with `out`
// left as it was.
absl::Status ExpandInternedEvidence(
    const ibgraphrag::v1::InternedEvidence& interned,
    google::protobuf::RepeatedPtrField<ibgraphrag::v1::EvidenceTriple>* out);

}  // namespace ibgraphrag::common

#endif  // IBGRAPHRAG_COMMON_INTERNED_EVIDENCE_H_
