#include "common/source_lineage.h"

#include <algorithm>

#include "absl/container/inlined_vector.h"

namespace ibgraphrag::common {
namespace {

struct LineageRule {
  absl::string_view source;
  absl::string_view relation;  // empty: every relation
  absl::string_view lineage;
};

// Hetionet v1.0's metaedges and the primary files of the embedded KG they were compiled from
// (Himmelstein et al. 2017, eLife, "Methods"; the dhimmel/* repositories ../shared/data names).
// Metaedges compiled from several resources (DaG, CbG, GpPW) and the disease-symptom edges (HSDN
// pairs filtered by a significance test) keep "hetionet" as their own lineage: they are not one
// upstream's copy.
constexpr LineageRule kRules[] = {
    {"hetionet", "drug causes side effect", "sider-side-effects"},
    {"hetionet", "drug treats disease", "pharmacotherapydb"},
    {"hetionet", "drug palliates disease", "pharmacotherapydb"},
    {"hetionet", "pharmacologic class includes drug", "drugcentral-classes"},
    // DrugBank's categories join only classes DrugCentral named, and both take MeSH's
    // pharmacological actions from MeSH.
    {"drugbank-categories", "pharmacologic class includes drug", "drugcentral-classes"},
    {"hetionet", "gene interacts with gene", "ppi-hetio-ind"},
    {"hetionet", "gene participates in biological process", "go-annotations"},
    {"hetionet", "gene participates in cellular component", "go-annotations"},
    {"hetionet", "gene participates in molecular function", "go-annotations"},
    {"hetionet", "anatomy expresses gene", "bgee-present"},
    {"hetionet", "anatomy upregulates gene", "bgee-diffex"},
    {"hetionet", "anatomy downregulates gene", "bgee-diffex"},
    // The DO's disease-symptom report lists its own "has symptom" axioms.
    {"do-disease-symptom", "", "do-axioms"},
    // The DO's definitions and its location axioms are one curation ("located_in liver" in the
    // text, 'disease has location' some liver in the logic).
    {"do-definitions", "", "do-axioms"},
};

}  // namespace

absl::string_view SourceLineage(absl::string_view source, absl::string_view relation) {
  for (const LineageRule& rule : kRules) {
    if (rule.source == source && (rule.relation.empty() || rule.relation == relation)) {
      return rule.lineage;
    }
  }
  return source;
}

int IndependentSourceCount(const std::vector<std::string>& sources, absl::string_view relation) {
  // A triple has a handful of sources: a linear scan, no allocation per triple scored.
  absl::InlinedVector<absl::string_view, 8> lineages;
  for (const std::string& source : sources) {
    const absl::string_view lineage = SourceLineage(source, relation);
    if (std::find(lineages.begin(), lineages.end(), lineage) == lineages.end()) {
      lineages.push_back(lineage);
    }
  }
  return static_cast<int>(lineages.size());
}

bool IsCuratedTargetStatement(absl::string_view relation, const std::vector<std::string>& sources) {
  if (relation == "drug targets gene") return true;
  if (relation != "drug binds gene") return false;
  return std::any_of(sources.begin(), sources.end(), [](const std::string& source) {
    return source == "drugbank-proteins" || source == "drugcentral-targets";
  });
}

bool IsPopulationAssociationSource(absl::string_view source) {
  return source == "gwas-catalog-2015" || source == "gwas-catalog-curated" ||
         source == "diseases-experiments";
}

}  // namespace ibgraphrag::common
