// Which sources of a triple are independent evidence.
//
// The embedded KG imports several compilations together with the primary files they were
// compiled from, so one fact can carry two source names that are one piece of evidence:
// Hetionet's side-effect edges are SIDER 4.1's (and, capped at 5,000 of SIDER's ~139,000 pairs,
// they mark a random sample of SIDER pairs, not stronger ones), its treats / palliates edges
// PharmacotherapyDB's indications, its class, interaction, GO and expression edges the
// DrugCentral, PPI, GO and Bgee files imported beside it; the Disease Ontology's disease-symptom
// report is a report of its own "has symptom" axioms. Counting those twice ranks an answer by how
// it was compiled instead of how well it is supported.
//
// Not every compilation is a copy: Hetionet's disease-symptom edges are the HSDN co-occurrences
// that passed its significance test, and its disease-gene, binding and pathway edges merge
// several resources. Those keep "hetionet" as a lineage of its own (folding the symptom edges
// into HSDN was measured: symptom hit@5 on the lookup dev set fell from 100 % to 83 %).
//
// SourceLineage maps a (source, relation) to the primary source it derives from (the source itself
// when it derives from no other imported source); IndependentSourceCount counts distinct lineages.
// The displayed sources are unchanged: a caller still sees every source name.
#ifndef IBGRAPHRAG_COMMON_SOURCE_LINEAGE_H_
#define IBGRAPHRAG_COMMON_SOURCE_LINEAGE_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace ibgraphrag::common {

// The primary source of `source` for a triple of `relation` ("hetionet", "drug causes side
// effect" -> "sider-side-effects"); `source` itself (the same view) when it is primary or
// unknown, so the result lives as long as `source` does.
absl::string_view SourceLineage(absl::string_view source, absl::string_view relation);

// The number of distinct lineages among `sources` for a triple of `relation`.
int IndependentSourceCount(const std::vector<std::string>& sources, absl::string_view relation);

// Whether `source` asserts gene-disease links only as population associations: the GWAS Catalog
// (gwas-catalog-2015, gwas-catalog-curated) and the DISEASES experiments channel (GWAS loci).
// Such a link says variants near the gene change the disease's risk, not that the gene's
// mutations cause it; a question asking for a causal gene ranks them last
// (QuestionIntent::asks_cause).
bool IsPopulationAssociationSource(absl::string_view source);

// Whether a triple of `relation` with `sources` states a drug's target as curated knowledge:
// "drug targets gene" (PrimeKG's target role), or "drug binds gene" from DrugBank's target role
// (`drugbank-proteins`: its enzymes, transporters and carriers are other relations) or
// DrugCentral's targets. BindingDB's measured affinities and Hetionet's "binds" edges (all four
// DrugBank roles merged upstream) are bindings, not statements of what the drug acts on: a question
// asking for a drug's target ranks them after the curated ones ("What is the target of
// omeprazole?": the proton pump, ATP4A/ATP4B, before the transporter ABCB1 that BindingDB and
// Hetionet list).
bool IsCuratedTargetStatement(absl::string_view relation, const std::vector<std::string>& sources);

}  // namespace ibgraphrag::common

#endif  // IBGRAPHRAG_COMMON_SOURCE_LINEAGE_H_
