#include "common/question_intent.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/text_words.h"

namespace ibgraphrag::common {
namespace {

// Entity types of the embedded KG (and PrimeKG's, lower-cased) that answers can have.
constexpr char kCompound[] = "compound";
constexpr char kDisease[] = "disease";
constexpr char kGene[] = "gene";
constexpr char kSymptom[] = "symptom";
constexpr char kPhenotype[] = "phenotype";
constexpr char kSideEffect[] = "side_effect";
constexpr char kAnatomy[] = "anatomy";
constexpr char kPathway[] = "pathway";
constexpr char kBiologicalProcess[] = "biological_process";
constexpr char kPharmacologicClass[] = "pharmacologic_class";

}  // namespace

const char* IntentConstraintName(IntentConstraint constraint) {
  switch (constraint) {
    case IntentConstraint::kAllOf:
      return "all_of";
    case IntentConstraint::kExcept:
      return "except";
    case IntentConstraint::kNone:
      break;
  }
  return "none";
}

const std::vector<IntentKind>& IntentKinds() {
  static const auto* kinds = new std::vector<IntentKind>{
      // A clinician asking what treats a disease accepts the symptomatic drugs too (levodopa for
      // Parkinson's disease is "palliates" in PharmacotherapyDB and Hetionet).
      {"treats",
       {{"drug treats disease", "compound", "disease"},
        {"drug palliates disease", "compound", "disease"},
        {"drug indicated for condition", "compound", ""},
        {"drug used off-label for disease", "compound", "disease"}},
       {kCompound, kDisease},
       "a drug that treats a disease (or relieves it), or the diseases a drug is used for"},
      // Few diseases have "palliates" edges (PharmacotherapyDB's symptomatic drugs); the labels'
      // indications (SIDER) name the drugs given for a condition's symptoms too ("indicated for
      // the relief of symptoms of irritable bowel syndrome").
      {"palliates",
       {{"drug palliates disease", "compound", "disease"},
        {"drug indicated for condition", "compound", ""}},
       {kCompound, kDisease},
       "a drug that relieves a disease's symptoms without changing its course"},
      {"side_effect",
       {{"drug causes side effect", "compound", "side_effect"}},
       {kSideEffect, kCompound},
       "an adverse effect of a drug, or the drugs that cause one"},
      {"symptom",
       {{"disease presents symptom", "disease", "symptom"},
        {"disease has phenotype", "disease", "phenotype"},
        {"disease has feature", "disease", ""}},
       {kSymptom, kPhenotype, kDisease},
       "a symptom, sign or phenotype of a disease, or the diseases that present it"},
      {"gene",
       {{"disease associated with gene", "disease", "gene"},
        {"gene associated with phenotype", "gene", "phenotype"},
        {"disease has material basis in", "disease", ""}},
       {kGene, kDisease, kPhenotype},
       "a gene associated with (mutated in, causing) a disease or phenotype"},
      {"target",
       {{"drug targets gene", "compound", "gene"}, {"drug binds gene", "compound", "gene"}},
       {kGene, kCompound},
       "the gene or protein a drug acts on, or the drugs acting on a gene"},
      // DrugBank's enzymes of a drug: what happens to the drug, not what it acts on (a target
      // question does not ask for them). Its transporters and carriers are no kind's: "Which
      // enzymes metabolize warfarin?" listed the carrier albumin first when they were this one's.
      {"metabolism",
       {{"drug is metabolized by gene", "compound", "gene"}},
       {kGene, kCompound},
       "the enzymes that metabolize a drug, or the drugs an enzyme metabolizes"},
      {"is_a",
       {{"disease is a subtype of disease", "disease", "disease"},
        {"phenotype is a subtype of phenotype", "phenotype", "phenotype"},
        {"disease parent or child of disease", "disease", "disease"}},
       {kDisease, kPhenotype},
       "a subtype or parent class of a disease or phenotype"},
      {"drug_class",
       {{"pharmacologic class includes drug", "pharmacologic_class", "compound"}},
       {kCompound, kPharmacologicClass},
       "the drugs of a pharmacologic class, or the class of a drug"},
      {"anatomy",
       {{"disease localizes to anatomy", "disease", "anatomy"}},
       {kAnatomy, kDisease},
       "the organ or tissue a disease affects"},
      {"pathway",
       {{"gene participates in pathway", "gene", "pathway"},
        {"gene participates in biological process", "gene", "biological_process"}},
       {kPathway, kBiologicalProcess, kGene},
       "a pathway or biological process a gene takes part in"},
      {"contraindication",
       {{"drug contraindicated for disease", "compound", "disease"}},
       {kCompound, kDisease},
       "a disease in which a drug must not be given"},
      {"interaction",
       {{"drug interacts with drug", "compound", "compound"},
        {"gene interacts with gene", "gene", "gene"}},
       {kCompound, kGene},
       "a drug-drug or gene-gene interaction"},
      {"expression",
       {{"anatomy expresses gene", "anatomy", "gene"},
        {"anatomy upregulates gene", "anatomy", "gene"}},
       {kAnatomy, kGene},
       "the tissues a gene is expressed in"},
  };
  return *kinds;
}

const IntentKind* FindIntentKind(absl::string_view name) {
  for (const IntentKind& kind : IntentKinds()) {
    if (name == kind.name) return &kind;
  }
  return nullptr;
}

bool QuestionIntent::AsksFor(absl::string_view relation_name) const {
  return std::find(relations.begin(), relations.end(), relation_name) != relations.end();
}

bool QuestionIntent::AsksKind(absl::string_view kind) const {
  return std::find(kinds.begin(), kinds.end(), kind) != kinds.end();
}

bool QuestionIntent::AsksForClassMembers() const {
  return constraint == IntentConstraint::kAllOf && kinds.size() > 1 && AsksKind("drug_class");
}

bool QuestionIntent::AcceptsType(absl::string_view type) const {
  if (answer_types.empty() || type.empty()) return true;
  return std::find(answer_types.begin(), answer_types.end(), type) != answer_types.end();
}

namespace {

// The declared end types of a KG relation an intent kind lists (the first listing); null for a
// relation no kind lists.
const IntentRelation* FindIntentRelation(absl::string_view relation_name) {
  for (const IntentKind& kind : IntentKinds()) {
    for (const IntentRelation& r : kind.relations) {
      if (relation_name == r.name) return &r;
    }
  }
  return nullptr;
}

}  // namespace

QuestionIntent::AnswerEnds QuestionIntent::AnswerEndsOf(absl::string_view relation_name) const {
  const IntentRelation* r = FindIntentRelation(relation_name);
  if (r == nullptr) return AnswerEnds{};
  AnswerEnds ends{AcceptsType(r->head_type), AcceptsType(r->tail_type)};
  // A relation whose ends both fit (or neither: the types disagree with the relation) keeps both
  // ends.
  if (!ends.head && !ends.tail) return AnswerEnds{};
  return ends;
}

bool QuestionIntent::AcceptsEnd(absl::string_view relation_name, bool head_end,
                                absl::string_view entity_type) const {
  const IntentRelation* r = FindIntentRelation(relation_name);
  const absl::string_view declared =
      r == nullptr ? absl::string_view() : (head_end ? r->head_type : r->tail_type);
  return declared.empty() ? AcceptsType(entity_type) : AcceptsType(declared);
}

std::vector<std::string> QuestionIntent::TopicTypes() const {
  std::vector<std::string> types;
  auto add = [&](absl::string_view type) {
    if (!type.empty() && std::find(types.begin(), types.end(), type) == types.end()) {
      types.emplace_back(type);
    }
  };
  // An end is the answer's when answer types are asked for and name its declared type.
  auto answers = [&](absl::string_view type) {
    return !answer_types.empty() && !type.empty() && AcceptsType(type);
  };
  for (const std::string& kind_name : kinds) {
    const IntentKind* kind = FindIntentKind(kind_name);
    if (kind == nullptr) continue;
    for (const IntentRelation& r : kind->relations) {
      const bool head = answers(r.head_type), tail = answers(r.tail_type);
      if (head == tail || !head) add(r.head_type);
      if (head == tail || !tail) add(r.tail_type);
    }
  }
  return types;
}

std::string QuestionIntent::Summary() const {
  if (empty()) return "none";
  std::string out = kinds.empty() ? "any relation" : absl::StrJoin(kinds, ", ");
  absl::StrAppend(&out, " -> ",
                  answer_types.empty() ? "any type" : absl::StrJoin(answer_types, "|"));
  if (constraint != IntentConstraint::kNone) {
    absl::StrAppend(&out, " (", IntentConstraintName(constraint), ")");
  }
  if (asks_cause) absl::StrAppend(&out, " (cause)");
  return out;
}

namespace {

// A crude English stem, enough for cue words: "medications" -> "medication", "therapies" ->
// "therapy"; "sepsis", "virus", "class" are left alone.
std::string Stem(std::string word) {
  const size_t n = word.size();
  if (n > 4 && absl::EndsWith(word, "ies")) return word.substr(0, n - 3) + "y";
  if (n > 3 && word.back() == 's') {
    const char before = word[n - 2];
    if (before != 's' && before != 'u' && before != 'i') word.pop_back();
  }
  return word;
}

// The sentence that asks: the last one ending in '?', else the last one. A vignette's history
// ("denies fever; does not smoke") must not be read as the question's cues.
absl::string_view FocusSentence(absl::string_view text) {
  size_t end = text.rfind('?');
  if (end == absl::string_view::npos) {
    end = text.size();
    while (end > 0 && (text[end - 1] == '.' || text[end - 1] == '!' ||
                       absl::ascii_isspace(static_cast<unsigned char>(text[end - 1])))) {
      --end;
    }
  }
  size_t begin = end;
  while (begin > 0) {
    const char c = text[begin - 1];
    // A sentence ends at ". " / "? " / "! " (not inside "e.g.", "2.5").
    if ((c == '.' || c == '?' || c == '!') && begin < text.size() &&
        absl::ascii_isspace(static_cast<unsigned char>(text[begin]))) {
      break;
    }
    --begin;
  }
  return text.substr(begin, end - begin);
}

// The focus sentence as lower-case words (`raw`) and their stems.
std::vector<std::string> Words(absl::string_view text, std::vector<std::string>* raw) {
  std::vector<std::string> words;
  std::string current;
  auto flush = [&] {
    if (current.empty()) return;
    raw->push_back(current);
    words.push_back(Stem(std::move(current)));
    current.clear();
  };
  for (const char ch : text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (IsWordByte(c)) {
      current.push_back(static_cast<char>(absl::ascii_tolower(c)));
    } else {
      flush();
    }
  }
  flush();
  return words;
}

// First position of `phrase` (space-separated stems) in `words`, or -1.
int Find(const std::vector<std::string>& words, absl::string_view phrase) {
  const std::vector<absl::string_view> parts = absl::StrSplit(phrase, ' ');
  if (parts.empty() || parts.size() > words.size()) return -1;
  for (size_t i = 0; i + parts.size() <= words.size(); ++i) {
    bool all = true;
    for (size_t k = 0; k < parts.size() && all; ++k) all = words[i + k] == parts[k];
    if (all) return static_cast<int>(i);
  }
  return -1;
}

// An answer noun: "which DRUGS", "what are the SIDE EFFECTS".
struct AnswerNoun {
  const char* phrase;  // stems
  std::vector<const char*> types;
  std::vector<const char*> kinds;          // kinds the noun is compatible with
  std::vector<const char*> default_kinds;  // when no verb cue picks among them
  // "What type of drug ...": the class or the drugs, as the verbs decide (ReadQuestionIntent).
  bool drug_kind = false;
  // The noun names a drug class ("which ANTIBIOTICS treat tuberculosis"): asked for drugs
  // through another relation, the answers must also belong to that class (ReadQuestionIntent).
  bool names_a_class = false;
};

// "antibiotic", "antidepressant": a noun that names a drug class.
AnswerNoun ClassNoun(const char* phrase, std::vector<const char*> kinds,
                     const char* default_kind = "treats") {
  return {phrase,
          {kCompound},
          std::move(kinds),
          {default_kind},
          /*drug_kind=*/false,
          /*names_a_class=*/true};
}

// "type of drug", "class of medication", ...: a drug-kind noun.
AnswerNoun DrugKindNoun(const char* phrase) {
  return {phrase,
          {kPharmacologicClass, kCompound},
          {"drug_class", "treats", "palliates", "target", "side_effect"},
          {"drug_class"},
          /*drug_kind=*/true};
}

const std::vector<AnswerNoun>& AnswerNouns() {
  // Multi-word phrases before their single words ("side effect" before "effect", "drug class"
  // before "drug"): at one position the longest phrase wins.
  static const auto* nouns = new std::vector<AnswerNoun>{
      {"side effect", {kSideEffect}, {"side_effect"}, {"side_effect"}},
      {"adverse effect", {kSideEffect}, {"side_effect"}, {"side_effect"}},
      {"adverse reaction", {kSideEffect}, {"side_effect"}, {"side_effect"}},
      {"adverse event", {kSideEffect}, {"side_effect"}, {"side_effect"}},
      {"adverse drug reaction", {kSideEffect}, {"side_effect"}, {"side_effect"}},
      {"toxicity", {kSideEffect}, {"side_effect"}, {"side_effect"}},
      {"drug class", {kPharmacologicClass}, {"drug_class"}, {"drug_class"}},
      {"pharmacologic class", {kPharmacologicClass}, {"drug_class"}, {"drug_class"}},
      {"class", {kPharmacologicClass}, {"drug_class"}, {"drug_class"}},
      {"biological process", {kBiologicalProcess, kPathway}, {"pathway"}, {"pathway"}},
      {"clinical feature", {kSymptom, kPhenotype}, {"symptom", "side_effect"}, {"symptom"}},
      {"body part", {kAnatomy}, {"anatomy", "expression"}, {"anatomy"}},
      {"part of the body", {kAnatomy}, {"anatomy", "expression"}, {"anatomy"}},
      // "What type of drug is metoprolol?" asks for its class; "What kind of medication is used
      // for migraine?" may still ask for the drugs (a verb cue picks).
      DrugKindNoun("type of drug"),
      DrugKindNoun("kind of drug"),
      DrugKindNoun("type of medication"),
      DrugKindNoun("kind of medication"),
      DrugKindNoun("type of medicine"),
      DrugKindNoun("kind of medicine"),
      DrugKindNoun("class of drug"),
      DrugKindNoun("class of medication"),
      {"type of", {kDisease, kPhenotype}, {"is_a"}, {"is_a"}},
      {"kind of", {kDisease, kPhenotype}, {"is_a"}, {"is_a"}},
      {"form of", {kDisease, kPhenotype}, {"is_a"}, {"is_a"}},
      {"drug",
       {kCompound},
       {"treats", "palliates", "target", "drug_class", "contraindication", "interaction",
        "side_effect", "metabolism"},
       {"treats"}},
      {"medication",
       {kCompound},
       {"treats", "palliates", "target", "drug_class", "contraindication", "interaction",
        "side_effect", "metabolism"},
       {"treats"}},
      {"medicine", {kCompound}, {"treats", "palliates", "target", "contraindication"}, {"treats"}},
      {"pharmacotherapy", {kCompound}, {"treats"}, {"treats"}},
      {"treatment", {kCompound}, {"treats", "palliates"}, {"treats"}},
      {"therapy", {kCompound}, {"treats", "palliates"}, {"treats"}},
      {"therapeutic", {kCompound}, {"treats"}, {"treats"}},
      // Drug-class nouns: "which antidepressants are SSRIs", "which anticoagulant ...".
      ClassNoun("antibiotic", {"treats", "drug_class", "side_effect"}),
      ClassNoun("antidepressant", {"treats", "drug_class", "target", "side_effect"}),
      ClassNoun("antihypertensive", {"treats", "drug_class", "side_effect"}),
      ClassNoun("anticoagulant", {"treats", "drug_class", "target", "side_effect"}),
      ClassNoun("antipsychotic", {"treats", "drug_class", "target", "side_effect"}),
      ClassNoun("anticonvulsant", {"treats", "drug_class", "side_effect"}),
      ClassNoun("antiepileptic", {"treats", "drug_class", "side_effect"}),
      ClassNoun("analgesic", {"treats", "palliates", "drug_class"}, "palliates"),
      ClassNoun("antiviral", {"treats", "drug_class", "side_effect"}),
      ClassNoun("diuretic", {"treats", "drug_class", "side_effect"}),
      {"agent", {kCompound}, {"treats", "palliates", "target", "drug_class"}, {"treats"}},
      {"compound", {kCompound}, {"treats", "target", "drug_class", "side_effect"}, {"treats"}},
      {"gene", {kGene}, {"gene", "target", "pathway", "expression", "interaction"}, {"gene"}},
      {"protein", {kGene}, {"gene", "target", "pathway", "expression", "interaction"}, {"target"}},
      {"enzyme", {kGene}, {"gene", "target", "pathway", "metabolism"}, {"gene", "target"}},
      {"kinase", {kGene}, {"gene", "target", "pathway"}, {"target"}},
      {"receptor", {kGene}, {"gene", "target"}, {"target"}},
      {"mutation", {kGene}, {"gene"}, {"gene"}},
      {"locus", {kGene}, {"gene"}, {"gene"}},
      {"symptom", {kSymptom, kPhenotype}, {"symptom", "side_effect"}, {"symptom"}},
      {"sign", {kSymptom, kPhenotype}, {"symptom", "side_effect"}, {"symptom"}},
      {"manifestation", {kSymptom, kPhenotype}, {"symptom", "side_effect"}, {"symptom"}},
      {"phenotype", {kPhenotype, kSymptom}, {"symptom", "gene"}, {"symptom"}},
      {"complication", {kDisease, kPhenotype, kSymptom}, {"symptom"}, {"symptom"}},
      {"disease",
       {kDisease},
       {"treats", "gene", "symptom", "is_a", "anatomy", "contraindication"},
       {"treats", "gene", "symptom"}},
      {"condition",
       {kDisease},
       {"treats", "gene", "symptom", "is_a", "contraindication"},
       {"treats", "gene", "symptom"}},
      {"disorder",
       {kDisease},
       {"treats", "gene", "symptom", "is_a"},
       {"treats", "gene", "symptom"}},
      {"illness", {kDisease}, {"treats", "gene", "symptom", "is_a"}, {"treats", "gene", "symptom"}},
      {"indication", {kDisease}, {"treats"}, {"treats"}},
      {"subtype", {kDisease, kPhenotype}, {"is_a"}, {"is_a"}},
      {"organ", {kAnatomy}, {"anatomy", "expression"}, {"anatomy"}},
      {"part", {kAnatomy}, {"anatomy"}, {"anatomy"}},
      {"tissue", {kAnatomy}, {"anatomy", "expression"}, {"anatomy"}},
      {"anatomy", {kAnatomy}, {"anatomy", "expression"}, {"anatomy"}},
      {"pathway", {kPathway, kBiologicalProcess}, {"pathway"}, {"pathway"}},
      {"process", {kBiologicalProcess, kPathway}, {"pathway"}, {"pathway"}},
  };
  return *nouns;
}

// Verb (and other) cues of each kind, as stems. A cue found anywhere in the focus sentence
// votes for its kind.
const std::vector<std::pair<const char*, std::vector<const char*>>>& KindCues() {
  static const auto* cues = new std::vector<std::pair<const char*, std::vector<const char*>>>{
      {"treats",
       {"treat",      "treated",        "treating",       "treatment",         "therapy",
        "used for",   "used in",        "used to",        "prescribed",        "prescribe",
        "indicated",  "indication",     "manage",         "management",        "cure",
        "first line", "drug of choice", "medication for", "for the treatment", "given for",
        "taken for",  "take for",       "medicine for",   "drug for",          "help with",
        "remedy",     "control"}},
      {"palliates", {"relieve", "relief", "palliate", "palliative", "symptomatic relief", "ease"}},
      {"side_effect",
       {"side effect", "adverse", "toxicity", "toxic", "cause", "induce", "induced", "reaction"}},
      {"symptom",
       {"symptom", "sign", "present", "presentation", "manifest", "manifestation",
        "clinical feature", "complain", "phenotype", "look like", "cause", "feature"}},
      {"gene",
       {"gene", "genetic", "mutated", "mutation", "mutant", "hereditary", "inherited", "locus",
        "associated", "association", "linked", "link", "implicated", "deficient", "deficiency",
        "variant", "cause", "susceptibility", "risk gene"}},
      {"target",
       {"target", "inhibit", "inhibitor", "bind", "binding", "block", "blocker", "agonist",
        "antagonist", "act on", "acts on", "mechanism", "receptor", "enzyme", "activate"}},
      {"metabolism",
       {"metabolize", "metabolizes", "metabolized", "metabolise", "metabolises", "metabolised",
        "metabolism", "metabolizing", "metabolising", "broken down by", "cleared by"}},
      {"is_a",
       {"subtype", "type of", "kind of", "form of", "is a", "variety", "classified as",
        "category"}},
      {"drug_class",
       {"class", "belong", "inhibitor", "blocker", "agonist", "antagonist", "example of",
        "category"}},
      {"anatomy",
       {"organ", "tissue", "affect", "localize", "localized", "where in the body", "anatomy",
        "body part", "part of the body", "located"}},
      {"pathway", {"pathway", "process", "involved in", "participate", "role in"}},
      {"contraindication",
       {"contraindicated", "contraindication", "should not be given", "must not be given", "avoid",
        "avoided"}},
      {"interaction", {"interact", "interaction"}},
      {"expression", {"expressed", "expression"}},
  };
  return *cues;
}

// Cues that say "the answer must link to every topic": "both X and Y", "shared by".
bool AsksForAll(const std::vector<std::string>& words) {
  for (const char* cue : {"both", "shared by", "in common", "common to", "all of the"}) {
    const int at = Find(words, cue);
    if (at < 0) continue;
    // "all of the following ... except" asks for the exception, not for all.
    if (std::string_view(cue) == "all of the" &&
        (Find(words, "all of the following") >= 0 || Find(words, "all of the above") >= 0)) {
      continue;
    }
    return true;
  }
  return false;
}

bool AsksForException(const std::vector<std::string>& words) {
  for (const char* cue :
       {"except", "not", "least", "never", "exception", "cannot", "isn", "doesn", "aren"}) {
    if (Find(words, cue) >= 0) return true;
  }
  return false;
}

void AddUnique(absl::string_view value, std::vector<std::string>* out) {
  if (std::find(out->begin(), out->end(), value) == out->end()) out->emplace_back(value);
}

// Fills relations (and answer types when none) from kinds, in IntentKinds() order.
void Complete(QuestionIntent* intent) {
  std::vector<std::string> ordered;
  for (const IntentKind& kind : IntentKinds()) {
    if (!intent->AsksKind(kind.name)) {
      continue;
    }
    ordered.emplace_back(kind.name);
    for (const IntentRelation& relation : kind.relations) {
      AddUnique(relation.name, &intent->relations);
    }
  }
  intent->kinds = std::move(ordered);
}

}  // namespace

bool IsYesNoQuestion(absl::string_view question) {
  static constexpr absl::string_view kAuxiliaries[] = {
      "is",   "are", "was",  "were",  "can",    "could", "does", "do",    "did", "has",
      "have", "had", "will", "would", "should", "shall", "may",  "might", "must"};
  static constexpr absl::string_view kNotYesNo[] = {"or",    "which", "what",  "who",  "whom",
                                                    "whose", "how",   "where", "when", "why"};
  absl::string_view text = absl::StripAsciiWhitespace(question);
  // Quotes and brackets around the question ('"Is X a Y?"', "(Is X a Y?)").
  auto is_wrapper = [](char c) {
    return c == '"' || c == '\'' || c == '(' || c == '[' || c == ')' || c == ']';
  };
  while (!text.empty() && is_wrapper(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_wrapper(text.back())) text.remove_suffix(1);
  if (text.empty() || text.back() != '?') return false;
  // One sentence: no '?', '!' or '.'-then-space before the final '?'.
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    const char c = text[i];
    if (c == '?' || c == '!' || (c == '.' && absl::ascii_isspace(text[i + 1]))) return false;
  }
  std::vector<std::string> words;
  for (absl::string_view w : absl::StrSplit(text, absl::ByAnyChar(" \t\n\r"), absl::SkipEmpty())) {
    std::string word;
    for (const char c : w) {
      if (absl::ascii_isalnum(c)) word.push_back(absl::ascii_tolower(c));
    }
    if (!word.empty()) words.push_back(std::move(word));
  }
  if (words.size() < 2 || words.size() > static_cast<size_t>(kMaxYesNoQuestionWords)) return false;
  if (std::find(std::begin(kAuxiliaries), std::end(kAuxiliaries), words[0]) ==
      std::end(kAuxiliaries)) {
    return false;
  }
  if (words[1] == "you" || words[1] == "we" || words[1] == "i" || words[1] == "there") return false;
  for (const std::string& word : words) {
    if (std::find(std::begin(kNotYesNo), std::end(kNotYesNo), word) != std::end(kNotYesNo)) {
      return false;
    }
  }
  return true;
}

QuestionIntent ReadQuestionIntent(absl::string_view question) {
  QuestionIntent intent;
  std::vector<std::string> raw;
  const std::vector<std::string> words = Words(FocusSentence(question), &raw);
  if (words.empty()) return intent;

  // 1. The answer noun: the first one in the sentence (the longest phrase at a position).
  const AnswerNoun* noun = nullptr;
  int noun_at = static_cast<int>(words.size());
  size_t noun_len = 0;
  for (const AnswerNoun& candidate : AnswerNouns()) {
    const int at = Find(words, candidate.phrase);
    if (at < 0) continue;
    const size_t len =
        std::count(candidate.phrase, candidate.phrase + strlen(candidate.phrase), ' ');
    if (at < noun_at || (at == noun_at && len > noun_len)) {
      noun = &candidate;
      noun_at = at;
      noun_len = len;
    }
  }

  // 2. Verb cues vote for kinds.
  std::vector<std::string> voted;
  std::vector<std::string> cue_words;
  for (const auto& [kind, cues] : KindCues()) {
    for (const char* cue : cues) {
      if (Find(words, cue) >= 0) {
        AddUnique(kind, &voted);
        AddUnique(cue, &cue_words);
        break;
      }
    }
  }

  // 3. Kinds: with a noun, the voted kinds it is compatible with (its defaults when none); a
  // noun's kinds are inclusive on purpose: only relations that touch a topic entity of the right
  // type ever match, so "what symptoms does X cause" may read as symptom and side effect alike.
  if (noun != nullptr) {
    intent.cues.emplace_back(noun->phrase);
    // The noun's head word as written (the last, or the first of "type of"): singular when it is
    // its own stem ("gene", not "genes").
    const size_t last =
        static_cast<size_t>(noun_at) + (absl::EndsWith(noun->phrase, " of") ? 0 : noun_len);
    intent.single_answer = last < raw.size() && raw[last] == words[last];
    for (const char* kind : noun->kinds) {
      if (std::find(voted.begin(), voted.end(), kind) != voted.end())
        AddUnique(kind, &intent.kinds);
    }
    // Generic verbs ("cause", "associated") vote for several kinds; when the noun's own default
    // is among them, the noun decides.
    if (intent.kinds.empty()) {
      for (const char* kind : noun->default_kinds) AddUnique(kind, &intent.kinds);
    }
    for (const char* type : noun->types) AddUnique(type, &intent.answer_types);
    // "What type of drug ...": the class when the class is asked for, else the drugs.
    if (noun->drug_kind) {
      const bool class_only = intent.kinds == std::vector<std::string>{"drug_class"};
      intent.answer_types = {class_only ? kPharmacologicClass : kCompound};
    }
    // "Which drugs are statins?": a drug noun followed by "are"/"is" and a name, not by a verb
    // ("are used", "is indicated"), asks for the members of a class.
    const size_t after = static_cast<size_t>(noun_at) + noun_len + 1;
    const bool drug_noun = std::string_view(noun->types.front()) == kCompound;
    if (drug_noun && after + 1 < raw.size() && (raw[after] == "are" || raw[after] == "is")) {
      static const auto* not_a_class = new std::vector<std::string>{"used",
                                                                    "prescribed",
                                                                    "indicated",
                                                                    "given",
                                                                    "approved",
                                                                    "effective",
                                                                    "recommended",
                                                                    "the",
                                                                    "first",
                                                                    "best",
                                                                    "commonly",
                                                                    "most",
                                                                    "available",
                                                                    "taken",
                                                                    "safe",
                                                                    "known",
                                                                    "contraindicated",
                                                                    "associated",
                                                                    "linked",
                                                                    "likely",
                                                                    "a",
                                                                    "an",
                                                                    "not",
                                                                    "no",
                                                                    "never",
                                                                    "there",
                                                                    "also",
                                                                    "often",
                                                                    "usually",
                                                                    "generally",
                                                                    "metabolized",
                                                                    "metabolised",
                                                                    "transported",
                                                                    "cleared"};
      if (std::find(not_a_class->begin(), not_a_class->end(), raw[after + 1]) ==
          not_a_class->end()) {
        AddUnique("drug_class", &intent.kinds);
        intent.cues.emplace_back(raw[after]);
      }
    }
    // "Which drug causes X" may ask for the drugs of a side effect: their answers are drugs.
    if (intent.AsksKind("side_effect") && std::string_view(noun->types.front()) == kSymptom) {
      AddUnique(kSideEffect, &intent.answer_types);
    }
  } else {
    // No noun: the specific verbs decide; the generic ones ("cause", "associated") only when
    // nothing more specific was said.
    intent.kinds = voted;
    // "How does pulmonary embolism present?", "What are the adverse effects of X?" without an
    // answer noun still ask for the topic's symptoms or side effects, never for the diseases
    // that present the topic or the drugs that cause it (asking for those needs a noun: "Which
    // diseases present with fever?"). Untyped, a phenotype topic answered with the diseases
    // whose phenotype it is.
    if (intent.kinds == std::vector<std::string>{"symptom"}) {
      intent.answer_types = {kSymptom, kPhenotype};
    } else if (intent.kinds == std::vector<std::string>{"side_effect"}) {
      intent.answer_types = {kSideEffect};
    }
  }
  // "Which antibiotics are used to treat tuberculosis?": drugs through the verb's relation that
  // are also members of the class the noun names (a question entity once aligned): the class's
  // "includes" relation is asked for too, and the answer must link to every question entity.
  const bool class_members = noun != nullptr && noun->names_a_class && !intent.kinds.empty() &&
                             !intent.AsksKind("drug_class");
  if (class_members) AddUnique("drug_class", &intent.kinds);
  // "Which enzymes metabolize warfarin?": the enzyme noun (and its "enzyme" cue) says target too,
  // but a drug's metabolising enzymes are not what it acts on.
  if (intent.AsksKind("metabolism")) {
    intent.kinds.erase(std::remove(intent.kinds.begin(), intent.kinds.end(), "target"),
                       intent.kinds.end());
  }
  for (const std::string& cue : cue_words) AddUnique(cue, &intent.cues);
  Complete(&intent);

  // 4. A cause asked for: "mutated in", "which genes cause", not "risk genes of".
  if (intent.AsksKind("gene")) {
    auto said = [&](std::initializer_list<const char*> cues) {
      return std::any_of(cues.begin(), cues.end(),
                         [&](const char* cue) { return Find(words, cue) >= 0; });
    };
    intent.asks_cause =
        said({"mutated", "mutation", "mutant", "cause", "caused", "causing", "causative",
              "responsible", "hereditary", "inherited", "germline"}) &&
        !said({"risk", "susceptibility", "associated", "association", "linked", "implicated"});
  }

  // 5. Constraint.
  if (AsksForAll(words)) {
    intent.constraint = IntentConstraint::kAllOf;
  } else if (AsksForException(words)) {
    intent.constraint = IntentConstraint::kExcept;
  } else if (class_members) {
    intent.constraint = IntentConstraint::kAllOf;
  }
  if (!intent.empty()) intent.origin = "question";
  return intent;
}

absl::StatusOr<QuestionIntent> IntentFromRequest(absl::Span<const std::string> kinds,
                                                 absl::Span<const std::string> answer_types,
                                                 IntentConstraint constraint,
                                                 absl::string_view field_prefix) {
  constexpr size_t kMaxEntries = 16;
  constexpr size_t kMaxTypeBytes = 64;
  if (kinds.size() > kMaxEntries) {
    return absl::InvalidArgumentError(absl::StrCat(field_prefix, ".relation_kinds: ", kinds.size(),
                                                   " entries, at most ", kMaxEntries));
  }
  if (answer_types.size() > kMaxEntries) {
    return absl::InvalidArgumentError(absl::StrCat(
        field_prefix, ".answer_types: ", answer_types.size(), " entries, at most ", kMaxEntries));
  }
  QuestionIntent intent;
  for (const std::string& name : kinds) {
    if (FindIntentKind(name) == nullptr) {
      std::vector<std::string> allowed;
      for (const IntentKind& kind : IntentKinds()) allowed.emplace_back(kind.name);
      return absl::InvalidArgumentError(absl::StrCat(field_prefix, ".relation_kinds: '", name,
                                                     "' is not one of ",
                                                     absl::StrJoin(allowed, ", ")));
    }
    AddUnique(name, &intent.kinds);
  }
  for (const std::string& type : answer_types) {
    const bool lower_word = !type.empty() && type.size() <= kMaxTypeBytes &&
                            std::all_of(type.begin(), type.end(), [](char c) {
                              return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
                            });
    if (!lower_word) {
      return absl::InvalidArgumentError(absl::StrCat(
          field_prefix, ".answer_types: each must be 1..", kMaxTypeBytes,
          " bytes of lower-case letters, digits and '_' (an entity type such as 'compound')"));
    }
    AddUnique(type, &intent.answer_types);
  }
  intent.constraint = constraint;
  Complete(&intent);
  if (!intent.empty()) intent.origin = "request";
  return intent;
}

}  // namespace ibgraphrag::common
