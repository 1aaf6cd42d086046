#include "common/question_intent_proto.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace ibgraphrag::common {

void IntentToProto(const QuestionIntent& intent, v1::QuestionIntent* out) {
  out->Clear();
  for (const std::string& kind : intent.kinds) out->add_relation_kinds(kind);
  for (const std::string& relation : intent.relations) out->add_relations(relation);
  for (const std::string& type : intent.answer_types) out->add_answer_types(type);
  for (const std::string& cue : intent.cues) out->add_cues(cue);
  switch (intent.constraint) {
    case IntentConstraint::kAllOf:
      out->set_constraint(v1::INTENT_CONSTRAINT_ALL_OF);
      break;
    case IntentConstraint::kExcept:
      out->set_constraint(v1::INTENT_CONSTRAINT_EXCEPT);
      break;
    case IntentConstraint::kNone:
      break;
  }
  out->set_origin(intent.origin);
  out->set_single_answer(intent.single_answer);
  out->set_asks_cause(intent.asks_cause);
}

absl::StatusOr<std::optional<QuestionIntent>> RequestedIntent(const v1::QuestionIntent& proto,
                                                              bool disabled,
                                                              absl::string_view field) {
  if (disabled) return std::optional<QuestionIntent>(QuestionIntent());
  if (proto.relation_kinds_size() == 0 && proto.answer_types_size() == 0) {
    return std::optional<QuestionIntent>();
  }
  IntentConstraint constraint = IntentConstraint::kNone;
  switch (proto.constraint()) {
    case v1::INTENT_CONSTRAINT_UNSPECIFIED:
      break;
    case v1::INTENT_CONSTRAINT_ALL_OF:
      constraint = IntentConstraint::kAllOf;
      break;
    case v1::INTENT_CONSTRAINT_EXCEPT:
      constraint = IntentConstraint::kExcept;
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".constraint: ", static_cast<int>(proto.constraint()),
                       " is not INTENT_CONSTRAINT_UNSPECIFIED, _ALL_OF or _EXCEPT"));
  }
  const std::vector<std::string> kinds(proto.relation_kinds().begin(),
                                       proto.relation_kinds().end());
  const std::vector<std::string> types(proto.answer_types().begin(), proto.answer_types().end());
  absl::StatusOr<QuestionIntent> intent = IntentFromRequest(kinds, types, constraint, field);
  if (!intent.ok()) return intent.status();
  // An intent the gateway read and forwards keeps its reading's details.
  intent->single_answer = proto.single_answer();
  intent->asks_cause = proto.asks_cause();
  if (proto.origin() == "question") {
    intent->origin = proto.origin();
    intent->cues.assign(proto.cues().begin(), proto.cues().end());
  }
  return std::optional<QuestionIntent>(*std::move(intent));
}

absl::StatusOr<QuestionIntent> ResolveIntent(const v1::QuestionIntent& proto, bool disabled,
                                             absl::string_view question, absl::string_view field) {
  absl::StatusOr<std::optional<QuestionIntent>> requested = RequestedIntent(proto, disabled, field);
  if (!requested.ok()) return requested.status();
  if (requested->has_value()) return **requested;
  return ReadQuestionIntent(question);
}

}  // namespace ibgraphrag::common
