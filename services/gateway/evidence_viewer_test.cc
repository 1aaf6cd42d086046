// The evidence viewer page (web/ui) on the all-in-one server's HTTP port: its files come back
// byte for byte with their Content-Type and Content-Security-Policy, and headless Chromium
// (Debian `chromium`) loads /ui/, asks the question, and draws the graph of the answer's
// evidence: the DOM it dumps is checked against the same answer fetched as JSON, and a
// screenshot is kept as a test artifact (<build>/Testing/viewer.png).
#include <httplib.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/file_util.h"
#include "common/test_util/status_matchers.h"
#include "common/test_util/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "services/gateway/testing/all_in_one_http.h"
#include "services/gateway/testing/small_suite.h"
#include "tests/test_util/subprocess.h"

namespace ibgraphrag::gateway {
namespace {

using ::ibgraphrag::testing::RunToCompletion;
using ::testing::HasSubstr;
using json = nlohmann::json;

constexpr char kQuestion[] = "Which drug treats type 2 diabetes mellitus?";
constexpr const char* kOptions[] = {"Metformin", "Polyuria"};

std::string SourceDir() {
  const char* dir = std::getenv("IBGR_SOURCE_DIR");
  return dir != nullptr ? dir : "";
}

// RFC 3986 unreserved characters pass; everything else is %XX.
std::string PercentEncode(const std::string& text) {
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (std::isalnum(byte) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += c;
    } else {
      absl::StrAppend(&out, "%", absl::Hex(byte, absl::kZeroPad2));
    }
  }
  return out;
}

// The value of attribute `name` of the element with id `id` in dumped HTML; "" when absent.
std::string Attribute(const std::string& html, const std::string& id, const std::string& name) {
  const std::regex tag("<[a-z]+ id=\"" + id + "\"[^>]*>");
  std::smatch match;
  if (!std::regex_search(html, match, tag)) return "";
  const std::regex attribute(" " + name + "=\"([^\"]*)\"");
  std::smatch value;
  const std::string element = match.str();
  return std::regex_search(element, value, attribute) ? value.str(1) : "";
}

// The text between the opening tag of element `id` and the next `</tag>`.
std::string Inner(const std::string& html, const std::string& id, const std::string& tag) {
  const std::regex element("<" + tag + " id=\"" + id + "\"[^>]*>([\\s\\S]*?)</" + tag + ">");
  std::smatch match;
  return std::regex_search(html, match, element) ? match.str(1) : "";
}

// What the page must show for `response`: its node ids (external id of every evidence end and
// aligned entity), evidence count and question entity ids.
struct ExpectedGraph {
  std::set<std::string> nodes;
  size_t edges = 0;
  std::set<std::string> question;
  std::map<std::string, std::string> names;  // entity name -> node id
};

ExpectedGraph ExpectedGraphOf(const json& response) {
  ExpectedGraph graph;
  for (const json& t : response.value("evidence", json::array())) {
    for (const char* end : {"head", "tail"}) {
      graph.nodes.insert(t[end]["external_id"].get<std::string>());
      graph.names[t[end]["name"].get<std::string>()] = t[end]["external_id"].get<std::string>();
    }
    ++graph.edges;
  }
  for (const json& e : response.value("entities", json::array())) {
    graph.question.insert(e["entity"]["external_id"].get<std::string>());
    graph.nodes.insert(e["entity"]["external_id"].get<std::string>());
  }
  return graph;
}

class EvidenceViewerTest : public gateway::testing::AllInOneHttpTest {
 protected:
  static void SetUpTestSuite() { StartSuite("evidence-viewer", {}); }
  // The question the browser sent never reaches the server's log.
  static void TearDownTestSuite() { StopSuite("Which drug treats"); }

  // The viewer URL that fills the form with the question and options and submits it.
  static std::string AutorunUrl() {
    std::string url =
        absl::StrCat("http://127.0.0.1:", http_port_, "/ui/#question=", PercentEncode(kQuestion));
    for (const char* option : kOptions) absl::StrAppend(&url, "&options=", PercentEncode(option));
    return url + "&autorun=1";
  }

  // Runs headless Chromium on `url` with `extra` flags; its stdout+stderr. Fails the test when
  // chromium is missing: the page's only end-to-end check must not vanish silently.
  static std::string RunChromium(const std::string& url, const std::vector<std::string>& extra) {
    const ::testing::AssertionResult installed =
        common::test_util::ProgramInstalled("chromium", "chromium");
    EXPECT_TRUE(installed);
    if (!installed) return "";
    std::vector<std::string> argv = {"/usr/bin/env",
                                     "chromium",
                                     "--headless=new",
                                     "--no-sandbox",
                                     "--disable-gpu",
                                     "--no-first-run",
                                     "--disable-extensions",
                                     "--user-data-dir=" + *dir_ + "/chromium-profile",
                                     "--virtual-time-budget=15000"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.push_back(url);
    const std::string log = *dir_ + "/chromium.log";
    std::filesystem::remove(log);
    auto exit = RunToCompletion(argv, log, absl::Seconds(60));
    EXPECT_TRUE(exit.ok() && *exit == 0)
        << (exit.ok() ? absl::StrCat("exit ", *exit) : "") << exit.status();
    auto output = common::ReadFileToString(log);
    EXPECT_OK(output);
    return output.ok() ? *output : "";
  }
};

TEST_F(EvidenceViewerTest, ServesEmbeddedFilesWithTypeAndContentSecurityPolicy) {
  const std::vector<std::pair<std::string, std::string>> files = {
      {"/ui/", "index.html"},
      {"/ui/viewer.js", "viewer.js"},
      {"/ui/viewer.css", "viewer.css"},
      {"/ui/cytoscape.min.js", "cytoscape.min.js"},
      {"/ui/cytoscape.LICENSE", "cytoscape.LICENSE"}};
  for (const auto& [path, file] : files) {
    auto res = Client().Get(path);
    ASSERT_TRUE(res) << path << ": " << httplib::to_string(res.error());
    ASSERT_EQ(res->status, 200) << path;
    auto source = common::ReadFileToString(SourceDir() + "/web/ui/" + file);
    ASSERT_OK(source);
    EXPECT_TRUE(res->body == *source) << path << " differs from web/ui/" << file;
    EXPECT_EQ(res->get_header_value("Content-Security-Policy").rfind("default-src 'self'", 0), 0)
        << path;
    EXPECT_EQ(res->get_header_value("X-Content-Type-Options"), "nosniff");
  }
  EXPECT_EQ(Client().Get("/ui/")->get_header_value("Content-Type"), "text/html; charset=utf-8");
  EXPECT_EQ(Client().Get("/ui/viewer.js")->get_header_value("Content-Type"),
            "text/javascript; charset=utf-8");
  EXPECT_EQ(Client().Get("/ui/viewer.css")->get_header_value("Content-Type"),
            "text/css; charset=utf-8");
  auto redirect = Client().Get("/ui");
  ASSERT_TRUE(redirect);
  EXPECT_EQ(redirect->status, 301);
  EXPECT_EQ(redirect->get_header_value("Location"), "/ui/");
  // Only the listed files: no other path, no file-system walk, no regex look-alike.
  for (const char* path : {"/ui/missing.js", "/ui/../CMakeLists.txt", "/ui/viewerXjs",
                           "/ui/CMakeLists.txt", "/ui/index.html"}) {
    auto res = Client().Get(path);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 404) << path;
  }
}

TEST_F(EvidenceViewerTest, HeadlessChromiumAsksAndDrawsTheEvidenceGraph) {
  // The same question as JSON: what the page must show.
  json request = {{"question", kQuestion}, {"options", kOptions}};
  auto res = Client().Post("/v1/answer", request.dump(), "application/json");
  ASSERT_TRUE(res && res->status == 200) << (res ? res->body : httplib::to_string(res.error()));
  const json response = json::parse(res->body);
  const ExpectedGraph expected = ExpectedGraphOf(response);
  ASSERT_GT(expected.edges, 0u) << res->body;
  ASSERT_FALSE(expected.question.empty()) << res->body;

  const std::string dom = RunChromium(AutorunUrl(), {"--dump-dom"});
  ASSERT_THAT(dom, HasSubstr("id=\"graph\"")) << dom;
  EXPECT_EQ(Attribute(dom, "error", "hidden"), "")
      << "error banner: " << Inner(dom, "error", "div");
  EXPECT_THAT(dom, ::testing::ContainsRegex("<div id=\"error\"[^>]* hidden"));
  EXPECT_EQ(Inner(dom, "answer", "p"), response["answer"]["text"].get<std::string>());
  for (const json& e : response["entities"]) {
    EXPECT_THAT(
        Inner(dom, "entities", "table"),
        HasSubstr(absl::StrCat("<tr><td>", e["entity"]["name"].get<std::string>(), "</td>")));
  }
  EXPECT_THAT(Inner(dom, "entities", "table"), HasSubstr("<tr><td>"));
  EXPECT_THAT(Inner(dom, "timings", "table"), HasSubstr("<tr><td>"));
  EXPECT_EQ(Attribute(dom, "graph", "data-status"), "drawn");
  EXPECT_EQ(Attribute(dom, "graph", "data-node-count"), std::to_string(expected.nodes.size()));
  EXPECT_EQ(Attribute(dom, "graph", "data-edge-count"), std::to_string(expected.edges));
  const std::vector<std::string> question_nodes =
      absl::StrSplit(Attribute(dom, "graph", "data-question-nodes"), ' ', absl::SkipEmpty());
  EXPECT_EQ(std::set<std::string>(question_nodes.begin(), question_nodes.end()), expected.question);
  // The chosen option's entity is highlighted as the answer node.
  ASSERT_EQ(response["answer"].value("option_letter", ""), "A") << res->body;
  EXPECT_EQ(Attribute(dom, "graph", "data-answer-nodes"), expected.names.at(kOptions[0]));
  // Nothing the page or cytoscape.js does is refused by the Content-Security-Policy.
  EXPECT_THAT(dom, ::testing::Not(HasSubstr("data-csp-violations")));
  // The page removed the question from the address bar after reading it.
  EXPECT_THAT(dom, ::testing::Not(HasSubstr("autorun")));
}

TEST_F(EvidenceViewerTest, RefusedRequestShowsTheErrorBannerWithTheGrpcCode) {
  // 27 options: one more than the gateway's limit.
  std::string url = absl::StrCat("http://127.0.0.1:", http_port_, "/ui/#question=x");
  for (int i = 0; i < 27; ++i) absl::StrAppend(&url, "&options=o", i);
  const std::string dom = RunChromium(url + "&autorun=1", {"--dump-dom"});
  ASSERT_THAT(dom, HasSubstr("id=\"error\"")) << dom;
  EXPECT_THAT(dom, ::testing::ContainsRegex("<div id=\"error\" class=\"error\" role=\"alert\">"
                                            "INVALID_ARGUMENT: [^<]*options"));
  EXPECT_THAT(dom, HasSubstr("<section id=\"result\" hidden"));
  EXPECT_EQ(Attribute(dom, "graph", "data-status"), "empty");
}

TEST_F(EvidenceViewerTest, ScreenshotIsSavedAsTestArtifact) {
  const char* artifacts = std::getenv("IBGR_TEST_ARTIFACTS_DIR");
  ASSERT_NE(artifacts, nullptr) << "run through ctest (sets IBGR_TEST_ARTIFACTS_DIR)";
  const std::string png = absl::StrCat(artifacts, "/viewer.png");
  std::filesystem::remove(png);
  RunChromium(AutorunUrl(), {"--screenshot=" + png, "--window-size=1280,900"});
  ASSERT_TRUE(std::filesystem::exists(png)) << png;
  auto bytes = common::ReadFileToString(png);
  ASSERT_OK(bytes);
  EXPECT_EQ(bytes->substr(0, 8), "\x89PNG\r\n\x1a\n");
  // A blank 1280x900 page compresses to a few KB; text, tables and the graph make far more.
  EXPECT_GT(bytes->size(), 30000u) << png;
}

}  // namespace
}  // namespace ibgraphrag::gateway
