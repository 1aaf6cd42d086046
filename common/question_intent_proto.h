// The QuestionIntent message (ibgraphrag.v1, common.proto) and common::QuestionIntent, both ways,
// and the one rule for an intent a request carries (AnswerRequest, RetrieveRequest,
// ReasonRequest): disabled, the caller's override, or read from the question.
#ifndef IBGRAPHRAG_COMMON_QUESTION_INTENT_PROTO_H_
#define IBGRAPHRAG_COMMON_QUESTION_INTENT_PROTO_H_

#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/question_intent.h"
#include "ibgraphrag/v1/common.pb.h"

namespace ibgraphrag::common {

void IntentToProto(const QuestionIntent& intent, v1::QuestionIntent* out);

// The intent of a request: an empty one when `disabled`; the caller's override when `proto`
// names a relation kind or an answer type (checked: INVALID_ARGUMENT naming
// "<field>.relation_kinds", "<field>.answer_types" or "<field>.constraint" and the limit);
// nullopt otherwise (the callee reads the question itself).
absl::StatusOr<std::optional<QuestionIntent>> RequestedIntent(const v1::QuestionIntent& proto,
                                                              bool disabled,
                                                              absl::string_view field);

// RequestedIntent, with nullopt resolved by reading `question`.
absl::StatusOr<QuestionIntent> ResolveIntent(const v1::QuestionIntent& proto, bool disabled,
                                             absl::string_view question, absl::string_view field);

}  // namespace ibgraphrag::common

#endif  // IBGRAPHRAG_COMMON_QUESTION_INTENT_PROTO_H_
