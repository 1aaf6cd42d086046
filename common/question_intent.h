// Question intent: what a clinical question asks for, read from its text. The one reader that the
// retriever (candidate budgets and the scorer's intent features), the reasoner's extractive
// backend (answers that follow the relation), the gateway modes and `ibgr ask` call, so that they
// all read a question alike.
//
// An intent has three parts:
//   relation kinds   what link to the topic entities the question asks about ("treats",
//                    "side_effect", "symptom", "gene", ...; kIntentKinds below), each with the KG
//                    relation names that express it ("drug treats disease", ...);
//   answer types     the entity types an answer has ("compound", "gene", "symptom", ...), from the
//                    question's answer noun ("which DRUGS", "what GENES", "adverse EFFECTS");
//   constraint       ALL_OF ("genes associated with both X and Y": an answer must link to every
//                    topic entity), EXCEPT ("which is NOT used", "all of the following EXCEPT").
//
// The reading is a small rule set over the question's words, built from the KG's relation
// vocabulary with the wording clinicians use ("medications for", "used to treat", "adverse
// effects of", "mutated in", "linked to", "what does X inhibit"). It knows nothing of the topic
// entities (types come from the KG relations' head and tail types where they are used), never
// fails, and returns an empty intent (no kind) for a question it cannot read: callers then keep
// their topic-neighbourhood behaviour. Plain C++, no gRPC, no KG.
#ifndef IBGRAPHRAG_COMMON_QUESTION_INTENT_H_
#define IBGRAPHRAG_COMMON_QUESTION_INTENT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace ibgraphrag::common {

enum class IntentConstraint {
  kNone,
  kAllOf,   // "both X and Y", "all of X, Y and Z": the answer links to every topic entity
  kExcept,  // "not", "except", "least likely": the answer is the one that does NOT link
};
// "none", "all_of", "except".
const char* IntentConstraintName(IntentConstraint constraint);

// A KG relation with the entity types of its ends ("" = mixed), as the KG's relation catalogue
// declares them.
struct IntentRelation {
  const char* name;
  const char* head_type;
  const char* tail_type;
};

// One relation kind a question can ask about.
struct IntentKind {
  const char* name;  // "treats"
  // KG relations that express it (those the KG lacks are simply never matched).
  std::vector<IntentRelation> relations;
  // Entity types an answer of this kind has when the question names no answer noun; either end
  // of the relations (the topic is the other end).
  std::vector<const char*> answer_types;
  const char* description;  // one line, for docs and `ibgr ask`
};
// Every kind, in a fixed order (the order relation kinds are reported in).
const std::vector<IntentKind>& IntentKinds();
// The kind named `name`, or null.
const IntentKind* FindIntentKind(absl::string_view name);

struct QuestionIntent {
  // Relation kinds asked about, in IntentKinds() order; empty = none recognised.
  std::vector<std::string> kinds;
  // The KG relation names of `kinds`, in order, each once.
  std::vector<std::string> relations;
  // Entity types an answer has; empty = any (the question names no answer noun).
  std::vector<std::string> answer_types;
  IntentConstraint constraint = IntentConstraint::kNone;
  // The answer noun is singular ("Which gene is mutated in ...", "What is the target of ..."):
  // the question expects one answer, or few; plural or no noun: a list.
  bool single_answer = false;
  // The question asks for a gene that causes the disease ("Which gene is mutated in sickle cell
  // anemia?", "Which genes cause ALS?", "... is inherited through"): a gene whose variants cause
  // it, not one near a risk locus. Set only with the "gene" kind, from a cause word (mutated,
  // mutation, cause, causative, responsible, hereditary, inherited, germline) where no risk word
  // (risk, susceptibility, associated, linked, implicated) is said. The extractive backend then
  // ranks genes whose only evidence is a population association (a GWAS locus) after the others.
  bool asks_cause = false;
  // The question's words that decided the reading ("drugs", "treat"): patient data, never logged.
  std::vector<std::string> cues;
  // "question" when read from the text, "request" when the caller gave it; "" when empty.
  std::string origin;

  bool empty() const { return kinds.empty() && answer_types.empty(); }
  // Whether `relation_name` is one of `relations`.
  bool AsksFor(absl::string_view relation_name) const;
  // Whether `kind` ("target", "drug_class", ...) is one of `kinds`.
  bool AsksKind(absl::string_view kind) const;
  // "Which antibiotics are used to treat tuberculosis?": a noun naming a drug class asked for the
  // drugs of another relation, so the answers must also be members of that class. The reader
  // says so with the drug_class kind beside another kind and ALL_OF (ReadQuestionIntent); an
  // intent that crossed a process boundary (its proto form) says it the same way.
  bool AsksForClassMembers() const;
  // Whether an entity of `type` can be an answer (any type when answer_types is empty; an empty
  // `type`, unknown, is accepted).
  bool AcceptsType(absl::string_view type) const;
  // Which end of a triple of `relation_name` can be the answer (the other end being a topic),
  // from the relation's declared end types and answer_types: for "What are the symptoms of
  // asthma?" only the tail of "disease presents symptom" (the asthma phenotype twin's diseases
  // at the head are no answer). Both for a relation the intent does not know.
  struct AnswerEnds {
    bool head = true;
    bool tail = true;
  };
  AnswerEnds AnswerEndsOf(absl::string_view relation_name) const;
  // Whether the entity at one end of a triple of `relation_name` (the head when `head_end`) can be
  // an answer: the relation's declared type for that end decides where it declares one (the tail
  // of "drug causes side effect" is a side effect whatever node the KG merged it into: SIDER's
  // Nausea is the HPO phenotype that shares its UMLS id; the head of "drug treats disease" is no
  // disease answer even if typed so); an end the relation leaves untyped, or a relation no intent
  // kind lists, takes the entity's own `entity_type`.
  bool AcceptsEnd(absl::string_view relation_name, bool head_end,
                  absl::string_view entity_type) const;
  // The entity types a topic of the question can have: per asked relation, the declared type of
  // the end opposite the answer ("What drugs treat COPD?": a compound is asked for, so the topic
  // is a disease). Without answer types (yes/no: "Is PTPN22 associated with RA?") the question
  // names entities at both ends, so both count. Untyped ends are left out; empty without kinds.
  std::vector<std::string> TopicTypes() const;
  // "treats -> compound (all_of)", for `ibgr ask` and logs of tests; "none" when empty.
  std::string Summary() const;
};

// A yes/no question: "Can atorvastatin cause rhabdomyolysis?", "Is tremor a symptom of
// Parkinson's disease?". One sentence of at most kMaxYesNoQuestionWords words ending in '?' (quotes
// and brackets around it ignored), opening with an auxiliary verb (is, are, was, were, can, could,
// does, do, did, has, have, had, will, would, should, shall, may, might, must), and none of: a
// second word "you", "we" or "I" ("Can you list ...?" is a request), "there" after the verb ("Are
// there drugs for ALS?" asks which), a wh-word, "or" ("Is X a drug or a gene?"). Negative openers
// ("Isn't ...?") are not read as yes/no questions. Answered as fact verification of the statement
// it asks about (the reasoner's ResolveTask; the gateway resolves it once for every mode).
inline constexpr int kMaxYesNoQuestionWords = 40;
bool IsYesNoQuestion(absl::string_view question);

// Reads `question` (any case, punctuation ignored; in a vignette only its last question sentence,
// so the history's words are not read as cues). Never fails; an unreadable question gives an
// empty intent. Options are not read: they name candidate answers, not what is asked.
QuestionIntent ReadQuestionIntent(absl::string_view question);

// The intent a caller gives (per-request override): `kinds` must be names of IntentKinds() and
// `answer_types` non-empty lower-case words of at most 64 bytes, at most 16 of each; relations
// are filled from the kinds. INVALID_ARGUMENT naming `field` (e.g. "intent.relation_kinds") and
// the allowed values otherwise. origin = "request".
absl::StatusOr<QuestionIntent> IntentFromRequest(absl::Span<const std::string> kinds,
                                                 absl::Span<const std::string> answer_types,
                                                 IntentConstraint constraint,
                                                 absl::string_view field_prefix);

}  // namespace ibgraphrag::common

#endif  // IBGRAPHRAG_COMMON_QUESTION_INTENT_H_
