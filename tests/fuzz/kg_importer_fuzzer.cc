// The KG importers (services/kgstore/import/*.h): files downloaded from a dozen projects, each
// with its own quirks. One source, one target per importer header (IBGR_FUZZ_IMPORTERS picks
// it); within a target the first byte picks the importer and whether the import is strict, the
// rest is the file, written to one scratch path the importer reads. An import either fails with
// a clear error naming the file, or yields a graph whose ids all point inside it.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"
#include "services/kgstore/import/import_common.h"
#include "services/kgstore/kg_builder.h"
#include "services/kgstore/kg_types.h"
#include "tests/fuzz/fuzz_util.h"

#if IBGR_FUZZ_IMPORTERS == 1
#include "services/kgstore/import/annotation_importers.h"
#elif IBGR_FUZZ_IMPORTERS == 2
#include "services/kgstore/import/drug_importers.h"
#elif IBGR_FUZZ_IMPORTERS == 3
#include "services/kgstore/import/expression_importers.h"
#elif IBGR_FUZZ_IMPORTERS == 4
#include "services/kgstore/import/gene_importers.h"
#include "services/kgstore/import/gwas_importer.h"
#elif IBGR_FUZZ_IMPORTERS == 5
#include "services/kgstore/import/hetionet_importer.h"
#elif IBGR_FUZZ_IMPORTERS == 6
#include "services/kgstore/import/ontology_importers.h"
#elif IBGR_FUZZ_IMPORTERS == 7
#include "services/kgstore/import/tabular_importers.h"
#else
#error "IBGR_FUZZ_IMPORTERS must be 1..7"
#endif

namespace {

using ibgraphrag::fuzz::Check;
using namespace ibgraphrag::kgstore;           // NOLINT: KgBuilder, KgData
using namespace ibgraphrag::kgstore::import_;  // NOLINT: the Import* functions

// Runs importer number `which` of this target's header on `path`.
absl::Status RunImporter(int which, const std::string& path, KgBuilder& builder,
                         const ImportOptions& options) {
#if IBGR_FUZZ_IMPORTERS == 1
  switch (which % 10) {
    case 0:
      return ImportHpoAnnotations(path, builder, options);
    case 1:
      return ImportHpoGenesToPhenotype(path, builder, options);
    case 2:
      return ImportDisGeNet(path, builder, options);
    case 3:
      return ImportPharmacotherapyDb(path, builder, options);
    case 4:
      return ImportDrugDiseaseIndications(path, "fuzz", "CC0-1.0", builder, options);
    case 5:
      return ImportHsdnSymptoms(path, builder, options);
    case 6:
      return ImportDoDiseaseSymptoms(path, builder, options);
    case 7:
      return ImportDoLogicalAxioms(path, builder, options);
    default:
      return ImportAbbreviations(path, builder, options);
  }
#elif IBGR_FUZZ_IMPORTERS == 2
  DrugJoin join;
  switch (which % 8) {
    case 0:
      return ImportDrugBankDrugs(path, builder, options, join);
    case 1:
      return ImportSiderIndications(path, builder, options, join);
    case 2:
      return ImportSiderSideEffects(path, builder, options, join);
    case 3:
      return ImportDrugBankProteins(path, builder, options);
    case 4:
      return ImportDrugCentralTargets(path, builder, options);
    case 5:
      return ImportDrugCentralClasses(path, builder, options);
    case 6:
      return ImportDrugCentralIndications(path, builder, options);
    default:
      return ImportBindingDb(path, builder, options);
  }
#elif IBGR_FUZZ_IMPORTERS == 3
  AnatomyNames names;
  switch (which % 3) {
    case 0:
      return ImportUberonTerms(path, builder, options, &names);
    case 1:
      names["UBERON:0002107"] = "liver";
      return ImportBgeePresence(path, names, builder, options);
    default:
      names["UBERON:0002107"] = "liver";
      return ImportBgeeDiffex(path, names, builder, options);
  }
#elif IBGR_FUZZ_IMPORTERS == 4
  switch (which % 8) {
    case 0:
      return ImportHgncGeneFamilies(path, builder, options);
    case 1:
      return ImportStringGeneMap(path, builder, options);
    case 2:
      return ImportDiseasesChannel(path, "textmining", builder, options);
    case 3:
      return ImportHumanPpi(path, builder, options);
    case 4:
      return ImportPathways(path, builder, options);
    case 5:
      return ImportGoAnnotations(path, builder, options);
    case 6:
      return ImportGwasGeneAssociations(path, builder, options);
    default: {
      builder.AddEntity("DOID:9352", "Disease", "type 2 diabetes mellitus");
      NameTraitMapper mapper(builder, NameTraitMapper::Options{});
      return ImportGwasCatalog(path, mapper, builder, options);
    }
  }
#elif IBGR_FUZZ_IMPORTERS == 5
  switch (which % 3) {
    case 0:
      return ImportHetionetNodes(path, builder, options);
    case 1:
      return ImportHetionetDiseaseGene(path, builder, options);
    default: {
      // Edges need the metaedge file: the same bytes serve as both, which keeps every line
      // reachable from one input.
      return ImportHetionetEdges(path, path, builder, options);
    }
  }
#elif IBGR_FUZZ_IMPORTERS == 6
  if ((which & 0x40) != 0) {
    // The DO's terms, then the sites their definitions name, over a few UBERON names.
    IBGR_RETURN_IF_ERROR(ImportDiseaseOntologyObo(path, builder, options));
    static const auto* const uberon = new AnatomyNames{{"UBERON:0002107", "liver"},
                                                       {"UBERON:0002110", "gall bladder"},
                                                       {"UBERON:0002097", "skin of body"},
                                                       {"UBERON:0002046", "thyroid gland"}};
    return ImportDoDefinitionLocations(path, *uberon, builder, options);
  }
  switch (which % 4) {
    case 0:
      return ImportDiseaseOntologyObo(path, builder, options);
    case 1:
      return ImportHpoObo(path, builder, options);
    case 2:
      return ImportDoXrefs(path, builder, options);
    default:
      return ImportHpoLaySynonyms(path, builder, options);
  }
#else
  switch (which % 2) {
    case 0:
      return ImportPrimeKgCsv(path, builder, options);
    default:
      return ImportTsvTriples(path, builder, options, "fuzz", "CC0-1.0");
  }
#endif
}

void CheckGraph(const KgData& kg) {
  for (size_t i = 0; i < kg.triples.size(); ++i) {
    const Triple& t = kg.triples[i];
    Check(t.head < kg.entities.size() && t.tail < kg.entities.size(),
          "a triple names an entity outside the graph");
    Check(t.relation < kg.relations.size(), "a triple names a relation outside the graph");
    Check(t.provenance < kg.provenance.size(), "a triple's provenance is outside the graph");
    Check(i == 0 || kg.triples[i - 1] < t, "triples are not sorted and unique");
  }
  for (const auto& group : kg.provenance) {
    Check(!group.empty(), "an empty provenance group");
    for (SourceId source : group)
      Check(source < kg.sources.size(), "a provenance source is unknown");
  }
  for (size_t i = 0; i < kg.entities.size(); ++i) {
    Check(kg.entities[i].id == i, "entities[i].id != i");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string& path = ibgraphrag::fuzz::WriteScratchFile(data + 1, size - 1, "import");
  ImportOptions options;
  options.strict = (data[0] & 0x80) != 0;
  KgBuilder builder;
  const absl::Status status = RunImporter(data[0] & 0x7f, path, builder, options);
  if (!status.ok()) {
    ibgraphrag::fuzz::CheckCleanError(status, "a malformed import file");
    Check(status.message().find(path) != absl::string_view::npos ||
              status.code() != absl::StatusCode::kInvalidArgument,
          "an import error does not name the file");
    return 0;
  }
  CheckGraph(builder.Finish());
  return 0;
}
