// Random scorer inputs shared by the scorer tests and the benchmark.
#ifndef IBGRAPHRAG_SERVICES_RETRIEVER_SCORER_TEST_UTIL_H_
#define IBGRAPHRAG_SERVICES_RETRIEVER_SCORER_TEST_UTIL_H_

#include <memory>
#include <random>
#include <vector>

#include "services/retriever/dde.h"
#include "services/retriever/embedding_table.h"
#include "services/retriever/fused_scorer.h"
#include "services/retriever/scorer_params.h"

namespace ibgraphrag::retriever::testing {

// Owns everything a CandidateBatch points into.
struct RandomCandidates {
  std::unique_ptr<EmbeddingTable> entities;
  std::unique_ptr<EmbeddingTable> relations;
  std::vector<float> question;
  std::vector<uint32_t> heads, rels, tails;
  std::vector<int32_t> head_nodes, tail_nodes;
  DdeFeatures dde;
  std::vector<float> prior;  // [triples x prior_dim]

  CandidateBatch batch() const {
    CandidateBatch b;
    b.question = question;
    b.heads = heads;
    b.relations = rels;
    b.tails = tails;
    b.head_nodes = head_nodes;
    b.tail_nodes = tail_nodes;
    b.dde = &dde;
    b.prior = prior;
    return b;
  }
};

inline std::vector<float> RandomVector(size_t n, std::mt19937* rng) {
  std::normal_distribution<float> d(0.0f, 0.3f);
  std::vector<float> v(n);
  for (float& x : v) x = d(*rng);
  return v;
}

// `triples` candidates over `num_entities` entities and `num_relations` relations, with a
// subgraph of `nodes` nodes whose DDE features are random in [0, 1], and `prior_dim` structure
// features per candidate (a logit in [-2, 4], then 0/1 indicators).
inline RandomCandidates MakeRandomCandidates(int text_dim, int dde_dim, int num_entities,
                                             int num_relations, int nodes, int triples,
                                             uint32_t seed, int prior_dim = kPriorFeatureDim) {
  std::mt19937 rng(seed);
  RandomCandidates r;
  r.entities = EmbeddingTable::FromVector(
      RandomVector(static_cast<size_t>(num_entities) * text_dim, &rng), text_dim);
  r.relations = EmbeddingTable::FromVector(
      RandomVector(static_cast<size_t>(num_relations) * text_dim, &rng), text_dim);
  r.question = RandomVector(text_dim, &rng);
  std::uniform_int_distribution<int> ent(0, num_entities - 1), rel(0, num_relations - 1),
      node(0, nodes - 1);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  // Each subgraph node stands for one entity, as in a real subgraph.
  std::vector<uint32_t> node_entity(nodes);
  for (uint32_t& e : node_entity) e = ent(rng);
  for (int i = 0; i < triples; ++i) {
    const int hn = node(rng), tn = node(rng);
    r.heads.push_back(node_entity[hn]);
    r.rels.push_back(rel(rng));
    r.tails.push_back(node_entity[tn]);
    r.head_nodes.push_back(hn);
    r.tail_nodes.push_back(tn);
  }
  r.dde.num_nodes = nodes;
  r.dde.dim = dde_dim;
  r.dde.values.resize(static_cast<size_t>(nodes) * dde_dim);
  for (float& x : r.dde.values) x = unit(rng) < 0.5f ? 0.0f : unit(rng);
  r.prior.resize(static_cast<size_t>(triples) * prior_dim);
  for (size_t i = 0; i < r.prior.size(); ++i) {
    r.prior[i] = i % prior_dim == 0 ? -2.0f + 6.0f * unit(rng) : (unit(rng) < 0.3f ? 1.0f : 0.0f);
  }
  return r;
}

}  // namespace ibgraphrag::retriever::testing

#endif  // IBGRAPHRAG_SERVICES_RETRIEVER_SCORER_TEST_UTIL_H_
