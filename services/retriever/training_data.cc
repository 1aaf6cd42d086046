#include "services/retriever/training_data.h"

#include <algorithm>
#include <random>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/file_util.h"
#include "common/status_macros.h"

namespace ibgraphrag::retriever {
namespace {

using kgstore::Direction;
using kgstore::EntityId;
using kgstore::KgStore;
using kgstore::RelationId;

uint64_t Fnv1a(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

absl::StatusOr<std::vector<EntityId>> AllNeighbors(const KgStore& store, EntityId entity,
                                                   Direction direction,
                                                   const std::vector<RelationId>& relations) {
  std::vector<EntityId> out;
  kgstore::NeighborQuery q;
  q.entity = entity;
  q.direction = direction;
  q.relations = relations;
  q.limit = kgstore::kMaxNeighborLimit;
  while (true) {
    IBGR_ASSIGN_OR_RETURN(kgstore::NeighborPage page, store.Neighbors(q));
    for (const kgstore::Triple& t : page.triples) out.push_back(t.head == entity ? t.tail : t.head);
    if (page.next_offset == 0) break;
    q.offset = page.next_offset;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<RelationId> RelationIds(const KgStore& store,
                                    std::initializer_list<const char*> names) {
  std::vector<RelationId> out;
  for (const char* n : names) {
    auto r = store.FindRelation(n);
    if (r.ok()) out.push_back(r->id);
  }
  return out;
}

}  // namespace

absl::StatusOr<QuestionSet> GenerateQuestions(const KgStore& store,
                                              const QuestionOptions& options) {
  const std::vector<RelationId> treats = RelationIds(store, {"drug treats disease"});
  const std::vector<RelationId> assoc = RelationIds(store, {"disease associated with gene"});
  const std::vector<RelationId> presents =
      RelationIds(store, {"disease presents symptom", "disease has phenotype"});
  if (treats.empty() && assoc.empty() && presents.empty()) {
    return absl::FailedPreconditionError(
        "KG has none of the relations the question templates use (drug treats disease, disease "
        "associated with gene, disease presents symptom / has phenotype)");
  }
  // Entity names and types.
  const int64_t n = store.num_entities();
  std::vector<EntityId> all(n);
  for (int64_t i = 0; i < n; ++i) all[i] = static_cast<EntityId>(i);
  std::vector<std::string> names(n), external(n);
  std::vector<EntityId> diseases;
  IBGR_RETURN_IF_ERROR(store.VisitEntitySummaries(all, [&](const kgstore::EntitySummaryView& e) {
    names[e.id] = std::string(e.name);
    external[e.id] = std::string(e.external_id);
    if (e.type == "disease") diseases.push_back(e.id);
  }));

  std::vector<GeneratedQuestion> drug, shared, pheno;
  absl::flat_hash_map<EntityId, std::vector<EntityId>> genes_of;     // disease -> genes
  absl::flat_hash_map<EntityId, std::vector<EntityId>> diseases_of;  // gene -> diseases
  for (EntityId d : diseases) {
    if (!treats.empty()) {
      IBGR_ASSIGN_OR_RETURN(auto drugs, AllNeighbors(store, d, Direction::kIn, treats));
      if (!drugs.empty() && static_cast<int>(drugs.size()) <= options.max_answers) {
        drug.push_back(
            {absl::StrCat("Which drug treats ", names[d], "?"), "drug_treats", {d}, drugs, {}});
      }
    }
    if (!presents.empty()) {
      IBGR_ASSIGN_OR_RETURN(auto ph, AllNeighbors(store, d, Direction::kOut, presents));
      if (!ph.empty() && static_cast<int>(ph.size()) <= options.max_answers) {
        pheno.push_back({absl::StrCat("Which phenotypes does ", names[d], " present with?"),
                         "phenotypes",
                         {d},
                         ph,
                         {}});
      }
    }
    if (!assoc.empty()) {
      IBGR_ASSIGN_OR_RETURN(auto genes, AllNeighbors(store, d, Direction::kOut, assoc));
      if (!genes.empty()) {
        for (EntityId g : genes) diseases_of[g].push_back(d);
        genes_of[d] = std::move(genes);
      }
    }
  }
  // Pairs of diseases sharing a gene, sampled deterministically per gene.
  std::mt19937_64 rng(options.seed);
  {
    std::vector<EntityId> genes;
    for (const auto& [g, ds] : diseases_of) {
      if (ds.size() >= 2) genes.push_back(g);
    }
    std::sort(genes.begin(), genes.end());
    absl::flat_hash_set<uint64_t> seen_pairs;
    for (EntityId g : genes) {
      std::vector<EntityId> ds = diseases_of[g];
      std::sort(ds.begin(), ds.end());
      std::uniform_int_distribution<size_t> pick(0, ds.size() - 1);
      EntityId a = ds[pick(rng)], b = ds[pick(rng)];
      if (a == b) continue;
      if (a > b) std::swap(a, b);
      if (!seen_pairs.insert((uint64_t{a} << 32) | b).second) continue;
      const auto& ga = genes_of[a];
      const auto& gb = genes_of[b];
      std::vector<EntityId> both;
      std::set_intersection(ga.begin(), ga.end(), gb.begin(), gb.end(), std::back_inserter(both));
      if (both.empty() || static_cast<int>(both.size()) > options.max_answers) continue;
      shared.push_back(
          {absl::StrCat("Which gene is associated with both ", names[a], " and ", names[b], "?"),
           "shared_gene",
           {a, b},
           both,
           {}});
    }
  }
  auto sample = [&](std::vector<GeneratedQuestion>* qs) {
    std::shuffle(qs->begin(), qs->end(), rng);
    if (options.max_per_template > 0 && static_cast<int>(qs->size()) > options.max_per_template) {
      qs->resize(options.max_per_template);
    }
  };
  sample(&drug);
  sample(&shared);
  sample(&pheno);

  QuestionSet out;
  common::Sha256Hasher hasher;
  const uint64_t dev_cut = static_cast<uint64_t>(options.dev_fraction * 1000.0);
  for (auto* qs : {&drug, &shared, &pheno}) {
    for (GeneratedQuestion& q : *qs) {
      kgstore::PathQuery pq;
      pq.sources = q.topics;
      pq.targets = q.answers;
      pq.max_length = options.max_hops;
      pq.max_paths = options.max_paths_per_question;
      pq.undirected = true;
      IBGR_ASSIGN_OR_RETURN(kgstore::PathResult paths, store.ShortestPaths(pq));
      absl::flat_hash_set<std::array<uint32_t, 3>> evidence;
      for (const kgstore::Path& p : paths.paths) {
        for (const kgstore::PathStep& s : p.steps) {
          evidence.insert({s.triple.head, s.triple.relation, s.triple.tail});
        }
      }
      if (evidence.empty()) continue;
      q.evidence.assign(evidence.begin(), evidence.end());
      std::sort(q.evidence.begin(), q.evidence.end());
      bool dev = false;
      for (EntityId t : q.topics) dev |= Fnv1a(external[t]) % 1000 < dev_cut;
      hasher.Update(absl::StrCat(q.text, "|", absl::StrJoin(q.topics, ","), "|",
                                 absl::StrJoin(q.answers, ","), "|", dev ? "dev" : "train", "\n"));
      (dev ? out.dev : out.train).push_back(std::move(q));
    }
  }
  out.hash = hasher.HexDigest();
  return out;
}

}  // namespace ibgraphrag::retriever
