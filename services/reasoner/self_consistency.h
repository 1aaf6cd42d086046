// Majority vote over self-consistency samples.
#ifndef IBGRAPHRAG_SERVICES_REASONER_SELF_CONSISTENCY_H_
#define IBGRAPHRAG_SERVICES_REASONER_SELF_CONSISTENCY_H_

#include <string>
#include <vector>

namespace ibgraphrag::reasoner {

struct SampleVote {
  double temperature = 0.0;
  // Answer key: option letter, fact label name or normalised free text; empty = abstains
  // (unparseable output).
  std::string key;
};

struct VoteOutcome {
  // Index into the samples of the first sample (lowest temperature, then earliest) that gave
  // the winning key; -1 when every sample abstained.
  int winner = -1;
  std::string key;
  int votes = 0;
  // votes / number of samples (abstentions count as disagreement); 0 when there are none.
  double agreement = 0.0;
};

// The most frequent non-empty key. Ties go to the key whose lowest-temperature sample has the
// lowest temperature (then the earliest sample), so the greedy answer wins a split vote and the
// result does not depend on thread timing.
VoteOutcome MajorityVote(const std::vector<SampleVote>& samples);

}  // namespace ibgraphrag::reasoner

#endif  // IBGRAPHRAG_SERVICES_REASONER_SELF_CONSISTENCY_H_
