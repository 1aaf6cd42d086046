// Versioned prompt templates. A template file `<kind>.v<N>.txt` (kind: mcq, fact, open) holds
// chat messages introduced by [[system]], [[user]] or [[assistant]] lines, with placeholders
// {{relations}}, {{triples}}, {{question}} and {{options}}. The files under
// services/reasoner/prompts/ are compiled into the binary as defaults; a configured directory
// adds versions or overrides them (TF Serving-style versioned artifacts, STYLE.md §7).
#ifndef IBGRAPHRAG_SERVICES_REASONER_PROMPT_TEMPLATES_H_
#define IBGRAPHRAG_SERVICES_REASONER_PROMPT_TEMPLATES_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "services/reasoner/reasoner_types.h"

namespace ibgraphrag::reasoner {

enum class Placeholder { kRelations, kTriples, kQuestion, kOptions };

// A run of template text: literal text, or one placeholder.
struct TemplateSegment {
  bool is_placeholder = false;
  Placeholder placeholder = Placeholder::kQuestion;
  std::string literal;
};

struct TemplateMessage {
  std::string role;  // "system", "user" or "assistant"
  std::vector<TemplateSegment> segments;
};

struct PromptTemplate {
  std::string kind;     // "mcq", "fact" or "open"
  int number = 0;       // N of ".vN"
  std::string version;  // "mcq.v1": what results report as prompt_version
  std::vector<TemplateMessage> messages;
};

// Parses template text. `version` is "<kind>.v<N>". INVALID_ARGUMENT (naming the version and
// the problem) for text outside sections, unknown roles or placeholders, a missing required
// placeholder ({{question}} and {{triples}}; {{options}} for mcq) or a last message that is not
// from the user.
absl::StatusOr<PromptTemplate> ParsePromptTemplate(absl::string_view version,
                                                   absl::string_view text);

// The template kind a task uses: "mcq", "fact" or "open" (kUnspecified must be resolved first).
absl::string_view TemplateKindForTask(Task task);

struct PromptLibraryOptions {
  // Directory holding `<kind>.v<N>.txt` files; "" uses only the compiled-in templates. Files of
  // the same version as a compiled-in one replace it; other files are ignored.
  std::string directory;
  // Version to serve per kind ("mcq.v1"); "" serves the highest version available.
  std::string multiple_choice_version;
  std::string fact_verification_version;
  std::string open_version;
};

class PromptLibrary {
 public:
  // Loads the compiled-in templates, then `options.directory`. NOT_FOUND when the directory or a
  // pinned version does not exist; INVALID_ARGUMENT when a template does not parse.
  static absl::StatusOr<PromptLibrary> Load(const PromptLibraryOptions& options);

  // The template served for a resolved task.
  const PromptTemplate& ForTask(Task task) const;

 private:
  PromptTemplate mcq_;
  PromptTemplate fact_;
  PromptTemplate open_;
};

// The template files compiled into the binary: (file name, contents), generated at build time
// from services/reasoner/prompts/*.txt.
const std::vector<std::pair<absl::string_view, absl::string_view>>& CompiledInPromptFiles();

}  // namespace ibgraphrag::reasoner

#endif  // IBGRAPHRAG_SERVICES_REASONER_PROMPT_TEMPLATES_H_
