// give: GIVE, graph-inspired veracity extrapolation (He et al., paper 002), on the suite's KG.
// Entity groups (each question entity with the nearest KG concepts alignment proposed for its
// mention), the KG links among the groups, intermediate groups (KG entities on 2-hop paths
// between two groups the KG does not link directly), candidate links within groups (the LLM
// names the relation) and across groups, intermediate ones included (every relation the KG has
// between the two groups, for every pair of members not already linked), each candidate checked
// by the LLM with a yes/no/maybe prompt (maybe: in neither set);
// then the paper's progressive answer: from the affirmed knowledge, refined with the rejected
// ("counterfactual") links, refined again with the KG facts. Without an LLM only the links
// present in the KG are kept, flagged as such. docs/modes.md says what follows the paper and
// what departs.
#ifndef IBGRAPHRAG_SERVICES_GATEWAY_MODES_GIVE_MODE_H_
#define IBGRAPHRAG_SERVICES_GATEWAY_MODES_GIVE_MODE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ibgraphrag/v1/common.pb.h"
#include "services/gateway/modes/pipeline_mode.h"

namespace ibgraphrag::gateway {

struct GiveOptions {
  // Entity groups: at most this many question entities (m; the paper reports 3-4 on average).
  int max_groups = 4;
  // KG concepts added to each queried entity (n; the paper does best with 1 or 2).
  int group_size = 2;
  // Intermediate groups per pair of groups the KG does not link directly: at most this many KG
  // entities on 2-hop paths between the two (best path score first), each its own group.
  int max_intermediates = 3;
  // LLM checks of candidate links (inner- and inter-group together), at most; the rest are
  // left out and the answer says how many.
  int max_checks = 24;
  // Share of the time left that the checks may take together.
  double check_share = 0.5;
  // Share of the time left that each of the first two progressive answers may take.
  double answer_share = 0.25;
};

class GiveMode final : public PipelineMode {
 public:
  explicit GiveMode(const GiveOptions& options) : options_(options) {}
  grpc::Status Run(const ModeCall& call, const PipelineStages& stages) const override;

  // A link between two KG entities: from the KG, or proposed and checked by the LLM.
  struct Link {
    uint32_t head = 0;
    std::string head_name;
    std::string relation;
    uint32_t tail = 0;
    std::string tail_name;
    bool inner = false;  // within one entity group (the LLM names the relation)
  };
  // What the reasoning rests on: affirmed links, rejected links, and KG facts; links the LLM
  // answered "maybe" about are kept apart (counted in the stage summary, in no prompt), as the
  // paper's Algorithm 1 does.
  struct Knowledge {
    std::vector<Link> affirmative;
    std::vector<Link> counterfactual;
    std::vector<Link> undecided;
    std::vector<ibgraphrag::v1::EvidenceTriple> kg;
  };

 private:
  // Asks the LLM about each candidate link (inner: names the relation; across groups: yes/no),
  // filling the affirmative and counterfactual sets; false when no LLM answered (then nothing
  // further is asked).
  bool CheckLinks(const ModeCall& call, const PipelineStages& stages,
                  const std::vector<Link>& candidates, Knowledge* knowledge) const;
  // The progressive answer (three reasoner calls), or without an LLM the reasoner's answer from
  // the KG links alone, flagged.
  grpc::Status Answer(const ModeCall& call, const PipelineStages& stages,
                      const Knowledge& knowledge, bool llm) const;

  const GiveOptions options_;
};

}  // namespace ibgraphrag::gateway

#endif  // IBGRAPHRAG_SERVICES_GATEWAY_MODES_GIVE_MODE_H_
