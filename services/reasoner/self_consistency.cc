#include "services/reasoner/self_consistency.h"

#include <map>
#include <string>
#include <vector>

namespace ibgraphrag::reasoner {

VoteOutcome MajorityVote(const std::vector<SampleVote>& samples) {
  struct Tally {
    int votes = 0;
    int first = -1;  // representative sample: lowest temperature, then earliest
  };
  std::map<std::string, Tally> tallies;
  for (size_t i = 0; i < samples.size(); ++i) {
    if (samples[i].key.empty()) continue;
    Tally& tally = tallies[samples[i].key];
    ++tally.votes;
    if (tally.first < 0 || samples[i].temperature < samples[tally.first].temperature) {
      tally.first = static_cast<int>(i);
    }
  }
  VoteOutcome outcome;
  const Tally* best = nullptr;
  for (const auto& [key, tally] : tallies) {
    const bool better = best == nullptr || tally.votes > best->votes ||
                        (tally.votes == best->votes &&
                         (samples[tally.first].temperature < samples[best->first].temperature ||
                          (samples[tally.first].temperature == samples[best->first].temperature &&
                           tally.first < best->first)));
    if (better) {
      best = &tally;
      outcome.key = key;
    }
  }
  if (best == nullptr) return outcome;
  outcome.winner = best->first;
  outcome.votes = best->votes;
  outcome.agreement = static_cast<double>(best->votes) / static_cast<double>(samples.size());
  return outcome;
}

}  // namespace ibgraphrag::reasoner
