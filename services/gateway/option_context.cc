#include "services/gateway/option_context.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

namespace ibgraphrag::gateway {
namespace {

namespace pb = ::ibgraphrag::v1;

// Link similarity at or above which a candidate's name is the option as written.
constexpr float kExactLink = 0.99F;

bool Inside(const pb::AlignedEntity& e, const OptionSpan& span) {
  return e.mention().begin() >= span.begin && e.mention().end() <= span.end &&
         e.mention().end() > e.mention().begin();
}

bool Exact(const pb::AlignedEntity& e) {
  return e.dictionary_match() || e.link_similarity() >= kExactLink;
}

bool Expected(const pb::AlignedEntity& e, const std::vector<std::string>& types) {
  return std::find(types.begin(), types.end(), e.entity().type()) != types.end();
}

// The option index whose line holds the entity's mention, or -1.
int OptionOf(const pb::AlignedEntity& e, const std::vector<OptionSpan>& spans) {
  for (size_t o = 0; o < spans.size(); ++o) {
    if (Inside(e, spans[o])) return static_cast<int>(o);
  }
  return -1;
}

}  // namespace

std::vector<std::string> ExpectedOptionTypes(const std::vector<OptionSpan>& spans,
                                             const std::vector<std::string>& answer_types,
                                             const pb::AlignResponse& aligned) {
  if (!answer_types.empty()) return answer_types;
  std::vector<std::set<std::string>> types(spans.size());
  for (const auto* list : {&aligned.kept(), &aligned.rejected()}) {
    for (const pb::AlignedEntity& e : *list) {
      const int o = OptionOf(e, spans);
      if (o >= 0 && Exact(e) && !e.excluded_by_llm() && !e.entity().type().empty()) {
        types[o].insert(e.entity().type());
      }
    }
  }
  std::map<std::string, int> votes;
  for (const std::set<std::string>& t : types) {
    for (const std::string& type : t) ++votes[type];
  }
  std::string best;
  int best_votes = 0;
  for (const auto& [type, count] : votes) {
    if (count > best_votes) best = type, best_votes = count;
  }
  if (best_votes >= 2 && 2 * best_votes > static_cast<int>(spans.size())) return {best};
  return {};
}

int ReadOptionsInContext(const std::vector<OptionSpan>& spans,
                         const std::vector<std::string>& expected_types,
                         pb::AlignResponse* aligned) {
  if (spans.empty() || expected_types.empty()) return 0;
  int changed = 0;
  for (size_t o = 0; o < spans.size(); ++o) {
    // The best exact candidate of an expected type: where it is (kept or rejected) and its index.
    const pb::AlignedEntity* best = nullptr;
    bool best_kept = false;
    int best_index = -1;
    for (const bool kept : {true, false}) {
      const auto& list = kept ? aligned->kept() : aligned->rejected();
      for (int i = 0; i < list.size(); ++i) {
        const pb::AlignedEntity& e = list[i];
        // What MSCA's LLM step passed over for this option stays passed over: it read the same
        // question and options.
        if (!Inside(e, spans[o]) || !Exact(e) || e.excluded_by_llm() ||
            !Expected(e, expected_types)) {
          continue;
        }
        if (best == nullptr || e.link_similarity() > best->link_similarity() ||
            (e.link_similarity() == best->link_similarity() &&
             e.consistency() > best->consistency())) {
          best = &e;
          best_kept = kept;
          best_index = i;
        }
      }
    }
    if (best == nullptr) continue;
    bool option_changed = false;
    // The option's kept entities of other types go to the rejected list.
    auto* kept = aligned->mutable_kept();
    for (int i = kept->size() - 1; i >= 0; --i) {
      const pb::AlignedEntity& e = kept->Get(i);
      if (!Inside(e, spans[o]) || Expected(e, expected_types)) continue;
      *aligned->add_rejected() = e;
      kept->DeleteSubrange(i, 1);
      option_changed = true;
    }
    if (!best_kept) {
      // Moved from the rejected list (its index there is unchanged: only appends happened).
      pb::AlignedEntity promoted = aligned->rejected(best_index);
      promoted.set_chosen_by_context(true);
      aligned->mutable_rejected()->DeleteSubrange(best_index, 1);
      *aligned->add_kept() = std::move(promoted);
      option_changed = true;
    }
    changed += option_changed ? 1 : 0;
  }
  return changed;
}

}  // namespace ibgraphrag::gateway
