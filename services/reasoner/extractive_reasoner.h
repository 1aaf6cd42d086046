// The extractive backend: answers from the retrieved evidence alone, deterministically, with no
// LLM. It is the embedded default and the fallback when an LLM backend fails.
//
// Evidence graph. Entities are the evidence triples' heads and tails, identified by id when
// present, by normalised name otherwise. Topic entities are the request's (matched on id, then
// name); without any that occur in the evidence, evidence entities whose names occur in the
// question stand in. Each triple weighs w = clamp(score, 0, 1) * (1 + relation_match_bonus * f),
// f = share of the relation's content words found in the question. reach(topic) = 1 and, over
// up to max_hops rounds, reach(v) = max over triples (u, v) of reach(u) * w * (u anchored ?
// 1 : hop_decay): the best score-weighted, length-discounted path from a topic entity.
//
// Ontology (DO / HPO is_a: a relation "... is a subtype of ...", head = subtype, tail =
// parent). Before propagation the topics' is_a closure in the evidence is anchored: a subtype
// down to max_subtype_depth levels gets reach(parent) * subtype_weight (1: a fact about a
// subtype supports its parent as if stated of the parent), a supertype up to
// max_supertype_depth levels gets reach(sub) * supertype_weight (0.5: a parent's facts support
// the subtype, weaker). Anchored nodes (topics and this closure; never siblings) carry no hop
// decay on the next step, and the rationale shows the path with the is_a step ("Path: disease
// <-[disease is a subtype of disease]- subtype <-[associates]- gene").
//
// Multiple choice. An option names an entity when their normalised names are equal (match 1),
// one's words contain the other's (0.6 + 0.4 * shared / larger word count) or their word
// Jaccard is at least min_name_match; differing numbers ("type 1" vs "type 2") never match.
// support(option) = sum over triples (u, e) with e named by the option and u reached, u not
// named by the option, of match * reach(u) * w * (u anchored ? 1 : hop_decay). Question entities
// are the request's topic entities found in the evidence, those of one question mention counted
// once (topic_mentions; without it, those of one name: "diabetes mellitus" the disease and the
// phenotype), leaving out a mention or name every sense of which an option names. With two or more
// of them, each option's support is also computed per entity, from that entity's topic nodes alone
// and never through another topic, and connected(option) = the number of entities with support > 0.
// Options rank by (connected, support): an option tied to every entity beats one tied strongly to
// one only; the runner-up counts for ties and low confidence only when as connected as the winner.
// The best option wins; zero support means insufficient evidence and no choice; a tie means no
// choice and low confidence. Questions asking for the exception ("not", "except", "least")
// choose the only unsupported option when every other option is supported, and are flagged low
// confidence.
//
// Fact verification. Claim entities are topic entities plus evidence entities named in the
// claim. A triple linking two claim entities whose relation words (stemmed, entity-type words
// such as "gene" ignored, "is a"/"type of" folded together) occur in the claim agrees with it
// when both or neither are negated ("not", "no", "never", "does not", "contraindicates"), and
// contradicts it otherwise; a relation that is the antonym of a claim word (upregulates /
// downregulates, increases / decreases, activates / inhibits, treats / contraindicates)
// contradicts a positive claim. Score-weighted agreement vs contradiction decides SUPPORTED or
// REFUTED; neither, or a tie, is UNKNOWN. Absence of evidence is never read as REFUTED. The
// rule does not understand the claim beyond entity names, relation words and negation cues.
// A yes/no question (common::IsYesNoQuestion: "Can atorvastatin cause rhabdomyolysis?") is
// verified as the claim it asks about, with one more way for a relation to be the claim's: a
// relation its intent asks about ("drug causes side effect"; "cause" is not "causes"). It is
// answered in its own words: "SUPPORTED (yes)", "REFUTED (no)", or UNKNOWN, where what the KG
// does not hold is not read as a no. A statement keeps the word rule only.
//
// Open questions with an intent (the request's, or read from the question: relation kinds and
// answer types, common/question_intent.h). Candidates are the entities at the other end of a
// triple whose relation the intent asks about and whose one end is a topic entity or one of its
// is_a anchors, of an answer type the intent accepts: the relation's declared type for that end
// where it declares one (the tail of "drug causes side effect" is a side effect whatever node the
// KG merged it into), else the entity's own (evidence without types: any). support(e) =
// sum over its triples of reach(topic end) * score * (1 + number of independent sources) *
// (1 + 0.5 * source_score when the source scored it): more independent sources (a compilation and
// the primary file it copies count once, common/source_lineage.h), stronger source scores and
// higher retriever scores rank first. ALL_OF ("both X and Y") keeps only candidates linked to every
// topic group (none: insufficient evidence, with the closest partial evidence as the rationale).
// A question asking for a causal gene (QuestionIntent::asks_cause: "Which gene is mutated in X?")
// ranks the candidates backed only by population associations (GWAS loci,
// common::IsPopulationAssociationSource) after the others, whatever their support, and those
// sources add nothing to any triple's independent-source count (a locus is no evidence of a
// cause). A singular answer noun lists up to max_single_answers within single_answer_share of the
// first answer's support; otherwise up to max_open_answers within list_answer_share. Each answer
// names its first triple and its sources; `answers` lists the names, `answer_entities` the
// entities with their triples and sources.
//
// Open questions without an intent: the best reasoning paths (or, without paths, the best triples
// touching a topic entity) rendered as "head -[relation]-> tail" chains. With an intent whose
// relations no evidence triple around the question's entities holds: insufficient evidence,
// said as such ("no side effects in the evidence link to ..."), then the same chains.
//
// Multiple choice with an intent: a triple of an asked relation counts as fully naming the
// question's relation and weighs intent_relation_weight times more (fact verification weighs its
// triples by their retriever score only).
//
// Question class (ClassifyQuestion, reasoner_types.h; reported in question_class and the
// signals): kg_lookup, clinical_reasoning or claim. KG-lookup multiple choice is decided by the
// intent first: per option, the question entities linked to it by one triple of an asked relation
// (the option's entity at the relation's answer end and of an accepted type; the other end the
// entity's topic node or an is_a anchor of it, never another option). The option linked to the
// most question entities wins, evidence strength (sum of name match * score * (1 + independent
// sources) * (1 + 0.5 * source score)) breaking ties; equal strength chooses nothing (low
// confidence). An exception question takes the only option not so linked while every other is.
// The answer text says why (the only option linked, or stronger evidence than the runner-up, with
// the sources).
// When no option is so linked, the reach rule above decides.
#ifndef IBGRAPHRAG_SERVICES_REASONER_EXTRACTIVE_REASONER_H_
#define IBGRAPHRAG_SERVICES_REASONER_EXTRACTIVE_REASONER_H_

#include "services/reasoner/reasoner_types.h"

namespace ibgraphrag::reasoner {

struct ExtractiveOptions {
  // Rounds of reach propagation: paths of up to this many triples from a topic entity to the
  // triple that touches an option lend support.
  int max_hops = 3;
  // Multiplier per intermediate entity on a path, so a 2-triple path counts half a direct one.
  double hop_decay = 0.5;
  // Reach of a topic's is_a subtype per level down (1: a subtype's facts count as the topic's).
  double subtype_weight = 1.0;
  // Reach of a topic's is_a parent per level up (a parent's facts support a subtype, weaker).
  double supertype_weight = 0.5;
  // is_a levels followed down from / up from a topic entity (0 turns that direction off).
  int max_subtype_depth = 3;
  int max_supertype_depth = 1;
  // Multiple choice with two or more question entities: rank options connected to more of them
  // first (false: by summed support alone, the behaviour before issue 14).
  bool prefer_connected_to_all = true;
  // Smallest option-to-entity name match in [0, 1] for word-overlap matches.
  double min_name_match = 0.6;
  // Extra triple weight, up to this fraction, when the relation's words occur in the question.
  double relation_match_bonus = 0.5;
  // The answer is low confidence when the runner-up has at least this share of the winner's
  // support.
  double low_confidence_ratio = 0.8;
  // Evidence lines listed in the rationale.
  int max_rationale_lines = 8;
  // Reasoning paths (or triples) rendered for open questions without an intent.
  int max_open_paths = 3;
  // Weight of a triple whose relation the question's intent asks about (common/question_intent.h),
  // on top of the full relation-match bonus: the evidence about what is asked outweighs the
  // topic's other facts in multiple choice and fact verification.
  double intent_relation_weight = 2.0;
  // Open questions with an intent: answers listed at most (a list question), and those kept only
  // while their support is at least this share of the best answer's.
  int max_open_answers = 10;
  double list_answer_share = 0.2;
  // ... and for a question whose answer noun is singular ("Which gene is mutated in X?"): a
  // runner-up is listed only when it is nearly as strong as the first. (0.5 listed TNF and HP
  // after HBB for sickle cell disease and F9 after F8 for hemophilia A; on the lookup dev set the
  // first answer of a singular question was an accepted one in 35 of 38, and 0.9 keeps the
  // near-ties: synonymous class names, rituximab's FCGR2B / FCGR2A / MS4A1.)
  int max_single_answers = 3;
  double single_answer_share = 0.9;
};

// Prompt version reported by extractive results.
inline constexpr char kExtractivePromptVersion[] = "extractive.v1";

// Answers `request` for the resolved `task`. Never fails: empty or unhelpful evidence gives an
// answer flagged insufficient_evidence. Fills answer, option/label, rationale, confidence,
// low_confidence, insufficient_evidence, evidence_used, backend ("extractive"), used_llm
// (false) and prompt_version; timings are left to the caller.
ReasonResult ReasonExtractively(const ReasonRequest& request, Task task,
                                const ExtractiveOptions& options);

}  // namespace ibgraphrag::reasoner

#endif  // IBGRAPHRAG_SERVICES_REASONER_EXTRACTIVE_REASONER_H_
