// How a KG triple is written out as text for a text encoder: f_θ in the IB objective (paper
// §3.2, "we transform these triples into language representations") embeds this string. Plain
// C++, so training, evaluation and serving code can share it without LibTorch.
#ifndef IBGRAPHRAG_SERVICES_RETRIEVER_TRIPLE_TEXT_H_
#define IBGRAPHRAG_SERVICES_RETRIEVER_TRIPLE_TEXT_H_

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace ibgraphrag::retriever {

// "head relation tail" from the entity names and the relation name: the words the reasoner
// shows as "(head, relation, tail)", without the punctuation, which the suite's encoders ignore.
inline std::string VerbaliseTriple(absl::string_view head, absl::string_view relation,
                                   absl::string_view tail) {
  return absl::StrCat(head, " ", relation, " ", tail);
}

}  // namespace ibgraphrag::retriever

#endif  // IBGRAPHRAG_SERVICES_RETRIEVER_TRIPLE_TEXT_H_
