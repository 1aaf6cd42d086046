// Importers for the drug-centred sources of issue 14: DrugBank drug nodes and protein targets,
// SIDER 4.1 side effects and indications, DrugCentral targets, classes and indications, and
// BindingDB affinities. Drugs are "DrugBank:DB....." entities (Hetionet's ids); STITCH flat ids
// ("STITCH:CID1...") and PubChem CIDs ("PubChem:...") from SIDER's indications file, InChIKeys
// from DrugBank and UniProt accessions of genes from DrugBank's protein table become aliases; the
// side-effect file (keyed by STITCH ids) lands on DrugBank compounds through the DrugJoin the
// SIDER indications import fills. Import the bridging files (DrugBank drugs, SIDER indications,
// DrugBank proteins) before the files that use them.
#ifndef IBGRAPHRAG_SERVICES_KGSTORE_IMPORT_DRUG_IMPORTERS_H_
#define IBGRAPHRAG_SERVICES_KGSTORE_IMPORT_DRUG_IMPORTERS_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "services/kgstore/import/import_common.h"
#include "services/kgstore/kg_builder.h"

namespace ibgraphrag::kgstore::import_ {

// What the drug importers hand on to each other, so SIDER's labels land on the drugs they are
// about. SIDER's indications file joins a STITCH flat compound id to every DrugBank entry of that
// flat structure: rivaroxaban's (CID106433119) to Rivaroxaban and to DB08477, an experimental
// entry of the same molecule; an ion's label to every salt of it (chloride, CID100000312: 29
// drugs, so cisplatin was "indicated for" hypokalemia and carbachol took potassium chloride's side
// effects).
struct DrugJoin {
  // At most this many marketed drugs share one label (enantiomers, salts, a combination's parts:
  // omeprazole and esomeprazole, carbidopa + levodopa + entacapone); more is an ion's fan-out.
  static constexpr size_t kMaxDrugsPerLabel = 3;
  // DrugBank ids of marketed drugs (groups "approved" or "withdrawn"): the drugs with labels.
  absl::flat_hash_set<std::string> marketed;
  // STITCH flat id ("CID1...") -> the compounds its label is about: the one DrugBank entry it
  // names, or its marketed entries when it names several (all of them when none is marketed), and
  // none when that leaves more than kMaxDrugsPerLabel.
  absl::flat_hash_map<std::string, std::vector<EntityId>> stitch;
  // DrugBank id -> its categories in drugbank-drugs.tsv (MeSH pharmacological actions and
  // DrugBank's own groupings), for ImportDrugBankCategories.
  absl::flat_hash_map<std::string, std::vector<std::string>> categories;
  // The file they came from and its SHA-256, for ImportDrugBankCategories' report.
  std::string drugbank_drugs_path, drugbank_drugs_sha256;
};

// drugbank-drugs.tsv (drugbank_id, name, type, groups, atc_codes, categories, inchikey, inchi,
// description; RFC 4180 quoting, descriptions span lines): one compound per drug, the description
// as definition, "InChIKey:<key>" as alias; marketed drugs into `join.marketed`, categories into
// `join.categories`. Licence CC BY-NC 4.0. No triples.
absl::Status ImportDrugBankDrugs(const std::string& path, KgBuilder& builder,
                                 const ImportOptions& options, DrugJoin& join);

// sider4-indications.tsv (drugbank_id, drugbank_name, pubchem_id, stitch_id_flat,
// umls_cui_from_label, method, concept_name, meddra_type, umls_cui_from_meddra, meddra_name):
// the STITCH id's drugs into `join.stitch` (see DrugJoin: a row whose DrugBank entry is not among
// them counts as unmapped), aliases "STITCH:<stitch_id_flat>" and "PubChem:<pubchem_id>" on the
// first of them, and "drug indicated for condition" (note = method) to the concept the UMLS CUI
// resolves to (DO and HPO xrefs, Hetionet side effects) for NLP_indication rows; text_mention rows
// (the label's text names the condition, as an indication, a warning or in passing) become "drug
// label mentions condition" instead; NLP_precondition rows state no indication and add only the
// aliases. Unresolved CUIs count as unmapped. Reads `join.marketed`: import DrugBank's drugs
// first. Licence CC BY-NC-SA 4.0.
absl::Status ImportSiderIndications(const std::string& path, KgBuilder& builder,
                                    const ImportOptions& options, DrugJoin& join);

// sider4-meddra_all_se.tsv (no header: STITCH flat id, STITCH stereo id, UMLS CUI from label,
// MedDRA type, UMLS CUI from MedDRA, side effect name): MedDRA preferred-term (PT) rows become
// "drug causes side effect" (Hetionet CcSE) to the concept "UMLS:<CUI from MedDRA>" resolves to,
// else a new side_effect entity; lower-level-term rows repeat a PT and add nothing. A STITCH id's
// drugs are `join.stitch`'s (from ImportSiderIndications); ids without drugs count as unmapped.
// SIDER gives no per-drug frequency, so each triple's score is the side effect's label base rate:
// the share of the file's (mapped) drugs whose labels list it (nausea ~0.87, a rare reaction
// ~0.001), the note "SIDER labels of N of M drugs list it". It ranks a drug's common reactions
// before its rare ones as an estimate, not as that drug's own frequency.
absl::Status ImportSiderSideEffects(const std::string& path, KgBuilder& builder,
                                    const ImportOptions& options, const DrugJoin& join);

// drugbank-proteins.tsv (drugbank_id, category, uniprot_id, entrez_gene_id, organism,
// known_action, actions, pubmed_ids): human rows add "UniProt:<id>" to the gene and a triple by
// the protein's role: a target "drug binds gene" (Hetionet CbG), an enzyme "drug is metabolized
// by gene", a transporter "drug is transported by gene", a carrier "drug has carrier gene"; note
// = category and actions, then ", known action" when known_action is "yes", which also makes the
// triple's score 1 (the drug is known to act through that protein). Unknown drugs or genes and
// non-human proteins count as unmapped; another category is malformed.
absl::Status ImportDrugBankProteins(const std::string& path, KgBuilder& builder,
                                    const ImportOptions& options);

// drugcentral-targets.tsv (GeneID, drugbank_id, drugbank_name, pubmed_ids, sources, actions,
// urls): "drug binds gene", note = sources and actions. Unknown genes count as unmapped.
absl::Status ImportDrugCentralTargets(const std::string& path, KgBuilder& builder,
                                      const ImportOptions& options);

// drugcentral-drug-to-class.tsv (drugbank_id, drugbank_name, class_id, class_name): "pharmacologic
// class includes drug". Class ids: N... -> "NDFRT:N..." (Hetionet's classes), D... -> "MESH:D..."
// (MeSH pharmacological actions), CHEBI:... kept.
absl::Status ImportDrugCentralClasses(const std::string& path, KgBuilder& builder,
                                      const ImportOptions& options);

// DrugBank's categories of a drug (`join.categories`, from ImportDrugBankDrugs) as "pharmacologic
// class includes drug" (source drugbank-categories), for the categories that name a pharmacologic
// class already in the KG (case-insensitively: "Anticoagulants" is DrugCentral's MeSH class
// MESH:D000925). DrugCentral's class file leaves many marketed drugs with no class at all
// (heparin among them, whose categories are Fibrinolytic Agents, Anticoagulants and Heparins).
// Categories that name no class ("Heparins", DrugBank's own groupings such as "Cytochrome P-450
// CYP3A Substrates") add nothing and count as unmapped. Both files take their MeSH classes from
// MeSH, so the two sources count as one lineage (common/source_lineage.h), and a pair DrugCentral
// already has gains the source and its note but keeps DrugCentral's score; a new pair's score is
// the class's specificity as DrugBank draws it, 1 / the drugs it puts in the category. Run after
// ImportDrugCentralClasses. Licence CC BY-NC 4.0.
absl::Status ImportDrugBankCategories(KgBuilder& builder, const DrugJoin& join);

// drugcentral-indications.tsv (doid_id, drugbank_id, disease, drug, category; PharmacotherapyDB's
// layout, read by ImportDrugDiseaseIndications): DM -> "drug treats disease", SYM -> "drug
// palliates disease"; NOT and empty categories add nothing. Licence CC BY 4.0.
absl::Status ImportDrugCentralIndications(const std::string& path, KgBuilder& builder,
                                          const ImportOptions& options);

// bindingdb-drugbank-gene.tsv (drugbank_id, entrez_gene, affinity_nM, n_pairs, sources, pubmeds,
// drugbank_name, drugbank_approved, gene_symbol): "drug binds gene", score = 1 - log10(nM) / 5
// clamped to 0..1 (1 nM -> 1, 100 nM -> 0.6, 10 uM -> 0.2), note = affinity. The licence follows
// the row's sources: CC BY-SA 3.0 when ChEMBL contributed, CC BY 3.0 otherwise.
absl::Status ImportBindingDb(const std::string& path, KgBuilder& builder,
                             const ImportOptions& options);

}  // namespace ibgraphrag::kgstore::import_

#endif  // IBGRAPHRAG_SERVICES_KGSTORE_IMPORT_DRUG_IMPORTERS_H_
