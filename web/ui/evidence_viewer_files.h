// The evidence viewer page (web/ui: index.html, viewer.js, viewer.css and the vendored
// cytoscape.js), embedded into the binary at build time by cmake/embed_files.cmake so that a
// server or a container image needs no files beside the binary to serve it.
#ifndef IBGRAPHRAG_WEB_UI_EVIDENCE_VIEWER_FILES_H_
#define IBGRAPHRAG_WEB_UI_EVIDENCE_VIEWER_FILES_H_

#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace ibgraphrag::ui {

// (file name, contents) of every page file, with static storage duration.
const std::vector<std::pair<absl::string_view, absl::string_view>>& EvidenceViewerFiles();

}  // namespace ibgraphrag::ui

#endif  // IBGRAPHRAG_WEB_UI_EVIDENCE_VIEWER_FILES_H_
