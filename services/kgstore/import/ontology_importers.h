// Importers for ontologies and their vocabulary files: OBO 1.2 (Disease Ontology, HPO, or any
// ontology through OboImportSpec), the DO cross-reference report and HPO lay synonyms. They run
// first so that UMLS/MeSH/OMIM/ORDO ids from later sources resolve to the DO or HPO concept.
#ifndef IBGRAPHRAG_SERVICES_KGSTORE_IMPORT_ONTOLOGY_IMPORTERS_H_
#define IBGRAPHRAG_SERVICES_KGSTORE_IMPORT_ONTOLOGY_IMPORTERS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "services/kgstore/import/expression_importers.h"
#include "services/kgstore/import/import_common.h"
#include "services/kgstore/kg_builder.h"

namespace ibgraphrag::kgstore::import_ {

// What to take from an OBO file and how to type it.
struct OboImportSpec {
  // Source name for reports and provenance ("doid", "hpo").
  std::string source;
  // Licence of the source as published ("CC0", "HPO license"); empty = unknown.
  std::string license;
  // Entity type of every imported term ("disease", "phenotype").
  std::string entity_type;
  // Only terms whose id starts with this prefix are imported ("DOID:"); OBO files also carry
  // stanzas for terms borrowed from other ontologies. Empty: all terms.
  std::string id_prefix;
  // Relation for is_a links, child -> parent ("disease is a subtype of disease").
  std::string is_a_relation;
  // Normalised xref prefixes (see NormalizeXref) registered as aliases of the term, e.g. {"UMLS",
  // "MESH"}. Empty: every xref. A phenotype ontology should not claim disease ids such as ORDO.
  std::vector<std::string> alias_prefixes;
  // One concept in two ontologies: when a term's xref with this normalised prefix ("UMLS") is
  // already another entity's, of type `share_names_with_type` ("disease"), the term's name and
  // EXACT synonyms become that entity's synonyms too (attributed to this source). HPO's "Heart
  // failure" (HP:0001635, UMLS C0018801/C0018802) thus also names the DO disease "congestive
  // heart failure" (DOID:6000), which holds those CUIs and the drugs indicated for it. The xref
  // keeps resolving to the entity that bound it first. Empty: no sharing.
  std::string share_names_xref_prefix;
  std::string share_names_with_type;
};

// Imports the [Term] stanzas of an OBO 1.2 file (plain or gzip): id, name, def, every synonym
// scope (EXACT, RELATED, BROAD, NARROW) as synonyms, alt_id and xref as aliases, is_a as triples.
// Obsolete terms are skipped; one with replaced_by becomes an alias of its replacement so old ids
// in other sources still resolve. rows_read counts [Term] stanzas; is_a parents that are not
// imported terms count as unmapped.
absl::Status ImportObo(const std::string& path, const OboImportSpec& spec, KgBuilder& builder,
                       const ImportOptions& options);

// Disease Ontology (doid.obo): "DOID:" terms as type disease, every xref an alias.
absl::Status ImportDiseaseOntologyObo(const std::string& path, KgBuilder& builder,
                                      const ImportOptions& options);
// Human Phenotype Ontology (hp.obo): "HP:" terms as type phenotype; UMLS, MeSH, SNOMED CT and
// MedDRA xrefs become aliases (HPO's ORPHA/DOID xrefs point at diseases and are not taken). A term
// whose UMLS CUI a disease bound first (the DO, imported before) lends that disease its name and
// EXACT synonyms, abbreviations such as "CHF" included (OboImportSpec::share_names_xref_prefix).
absl::Status ImportHpoObo(const std::string& path, KgBuilder& builder,
                          const ImportOptions& options);

// DO report allXREFinDO.tsv ("id", "label", "xref", quoted): extra aliases for known DOIDs; rows
// whose DOID is not in the KG count as unmapped.
absl::Status ImportDoXrefs(const std::string& path, KgBuilder& builder,
                           const ImportOptions& options);

// HPO layperson-synonyms.tsv (<http://purl.obolibrary.org/obo/HP_0002648>, label, lay synonym):
// lay synonyms of known HP terms; unknown terms count as unmapped.
absl::Status ImportHpoLaySynonyms(const std::string& path, KgBuilder& builder,
                                  const ImportOptions& options);

// Where the Disease Ontology's definitions put each disease: "disease localizes to anatomy"
// triples of source "do-definitions" (CC0). DO writes its definitions in a controlled style ("An
// intestinal disease that involves inflammation located_in intestine."); each "located_in X"
// whose X (articles dropped; the longest run of up to 8 words that names an anatomy entity of the
// KG, or else a term of `uberon` (id -> name, uberon-terms.tsv, also matched without spaces),
// which then becomes an anatomy entity; tried as written, singular, as UBERON's "X of body" and as
// "X gland") resolves is a location, and so is each further item of a list that follows it
// ("located_in kidney, ureter, bladder and urethra", up to the first item naming none); "located
// in" in plain words counts too. A
// disease whose definition names none takes those of its nearest is_a ancestors that have one
// (glaucoma: "An eye disease ...", and eye disease is "located_in the eye") when they name one site
// (several are alternatives a subtype has one of). Each triple's score
// is how directly DO says it: 1 for the disease's own definition, 1 / (1 + d) for an ancestor d
// steps up, less 0.01 for each location found before it in that definition (the main site comes
// first); its note names the definition it comes from. Run it after every importer that adds
// anatomy entities. rows_read counts DOID terms; a located_in phrase that names no anatomy entity
// counts as unmapped.
absl::Status ImportDoDefinitionLocations(const std::string& path, const AnatomyNames& uberon,
                                         KgBuilder& builder, const ImportOptions& options);

}  // namespace ibgraphrag::kgstore::import_

#endif  // IBGRAPHRAG_SERVICES_KGSTORE_IMPORT_ONTOLOGY_IMPORTERS_H_
