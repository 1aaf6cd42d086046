// Importers for the annotation tables that hang genes, phenotypes, symptoms and drugs on the
// Disease Ontology and HPO backbone: HPO annotations, DisGeNET, PharmacotherapyDB, HSDN, the DO
// reports (disease-symptom, logical axioms) and a medical abbreviation list.
//
// SourceReport::unmapped_ids counts rows (for DO axioms: restriction fillers) whose ids or labels
// did not resolve to an entity of the backbone. Whether such rows are dropped or create entities
// is stated per importer: genes (Entrez), drugs (DrugBank) and symptoms (MeSH, SYMP) are real
// identifiers and are created when unknown; disease ids are only joined, except for the HPO
// annotations (see ImportOptions::create_unresolved_hpo_diseases).
#ifndef IBGRAPHRAG_SERVICES_KGSTORE_IMPORT_ANNOTATION_IMPORTERS_H_
#define IBGRAPHRAG_SERVICES_KGSTORE_IMPORT_ANNOTATION_IMPORTERS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "services/kgstore/import/import_common.h"
#include "services/kgstore/kg_builder.h"

namespace ibgraphrag::kgstore::import_ {

// HPO phenotype.hpoa (DatabaseID, DiseaseName, Qualifier, HPO_ID, ..., Aspect, ...). Disease ids
// OMIM:/ORPHA:/DECIPHER: resolve through DO xrefs (ORPHA is spelled ORDO in the DO). Aspect P ->
// "disease has phenotype" ("disease does not have phenotype" with qualifier NOT), I -> "disease
// has mode of inheritance", C -> "disease has clinical course", M -> "disease has clinical
// modifier". Unresolved diseases count as unmapped and become their own disease entities when
// options.create_unresolved_hpo_diseases; unknown HP ids count as unmapped and are dropped.
absl::Status ImportHpoAnnotations(const std::string& path, KgBuilder& builder,
                                  const ImportOptions& options);

// HPO genes_to_phenotype.txt (entrez id, symbol, HP id, HP name, ...): "gene associated with
// phenotype". Genes are created from their symbol when unknown; HP ids newer than the loaded HPO
// are created from the name given in the row and counted as unmapped.
absl::Status ImportHpoGenesToPhenotype(const std::string& path, KgBuilder& builder,
                                       const ImportOptions& options);

// DisGeNET curated_gene_disease_associations (geneId, geneSymbol, geneName, diseaseId "umls:C...",
// diseaseName, ...): "disease associated with gene" (shared with Hetionet DaG). The UMLS CUI must
// resolve to a disease entity (through DO xrefs); other rows count as unmapped and are dropped.
// The row's score (column 6, 0..1) is the triple's score, its publication count and evidence
// sources (columns 7 and 9) the note: HBB scores 0.50 for sickle cell anemia, CAD 0.21.
absl::Status ImportDisGeNet(const std::string& path, KgBuilder& builder,
                            const ImportOptions& options);

// PharmacotherapyDB indications.tsv (doid_id, drugbank_id, disease, drug, category, ...): DM ->
// "drug treats disease", SYM -> "drug palliates disease" (Hetionet CtD / CpD); NOT rows are
// non-indications and add nothing. Drugs are created when unknown; unknown DOIDs are unmapped.
absl::Status ImportPharmacotherapyDb(const std::string& path, KgBuilder& builder,
                                     const ImportOptions& options);
// The same reader for any indication table of that layout (DrugCentral's rephetio export) under
// its own source name and licence; rows with an empty category add nothing either.
absl::Status ImportDrugDiseaseIndications(const std::string& path, absl::string_view source_name,
                                          absl::string_view license, KgBuilder& builder,
                                          const ImportOptions& options);

// HSDN symptoms-DO.tsv (symptom_name, disease_name, cooccurs, tfidf_score, disease_id,
// symptom_id, doid_code, doid_name): "disease presents symptom" (Hetionet DpS) from the MeSH
// symptom to the DOID. Symptoms are created when unknown; unknown DOIDs are unmapped.
absl::Status ImportHsdnSymptoms(const std::string& path, KgBuilder& builder,
                                const ImportOptions& options);

// DO disease-symptom report (disease_id, disease_label, symptom_id SYMP:..., symptom_label):
// "disease presents symptom". A SYMP id joins a symptom or phenotype entity with exactly the same
// name (as an alias); otherwise it becomes a symptom entity named by the report.
absl::Status ImportDoDiseaseSymptoms(const std::string& path, KgBuilder& builder,
                                     const ImportOptions& options);

// DO-subClassOf-anonymous.tsv (ID, LABEL, axioms joined by '|'): every `'property' some filler`
// restriction (also inside parentheses, and `some ('a' or 'b')`) whose filler label names a known
// entity of a fitting type becomes a triple: 'has symptom' -> "disease presents symptom",
// 'has phenotype' -> "disease has phenotype", 'disease has location' -> "disease localizes to
// anatomy", 'has material basis in' -> "disease has material basis in" (or "disease has mode of
// inheritance" for inheritance fillers), and "disease <property>" for the others. Fillers that do
// not resolve, compound fillers and non-`some` restrictions (exactly/min/only) count as unmapped.
absl::Status ImportDoLogicalAxioms(const std::string& path, KgBuilder& builder,
                                   const ImportOptions& options);

// Abbreviation list ("abr","long_form" CSV): the abbreviation becomes a synonym of the entity
// whose name (preferred) or synonym equals the long form, ignoring case; rows whose long form
// names no entity count as unmapped. Run it last: it can only reach entities that exist.
absl::Status ImportAbbreviations(const std::string& path, KgBuilder& builder,
                                 const ImportOptions& options);

}  // namespace ibgraphrag::kgstore::import_

#endif  // IBGRAPHRAG_SERVICES_KGSTORE_IMPORT_ANNOTATION_IMPORTERS_H_
