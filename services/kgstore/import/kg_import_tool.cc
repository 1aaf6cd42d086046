// kg_import_tool embedded <data_dir> [triples.tsv [entities.tsv]]
//     Builds the embedded default KG, prints its summary with the build time and optionally
//     writes it as TSV.
// kg_import_tool synthetic [num_entities num_triples [triples.tsv [entities.tsv]]]
//     Generates the synthetic PrimeKG-scale graph (default full size), optionally writes it as
//     TSV for PostgreSQL COPY, and prints counts and timings.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "services/kgstore/import/embedded_kg.h"
#include "services/kgstore/import/synthetic_kg.h"

namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

int Usage() {
  std::fprintf(stderr,
               "usage: kg_import_tool embedded <data_dir> [triples.tsv [entities.tsv]]\n"
               "       kg_import_tool synthetic [num_entities num_triples [triples.tsv "
               "[entities.tsv]]]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  namespace import_ = ibgraphrag::kgstore::import_;
  if (argc < 2) return Usage();
  const std::string command = argv[1];
  if (command == "embedded" && argc >= 3 && argc <= 5) {
    import_::ImportOptions options;
    options.data_dir = argv[2];
    const auto start = Clock::now();
    absl::StatusOr<ibgraphrag::kgstore::KgData> kg = import_::BuildEmbeddedKg(options);
    const double seconds = SecondsSince(start);
    if (!kg.ok()) {
      std::fprintf(stderr, "%s\n", kg.status().ToString().c_str());
      return 1;
    }
    std::printf("%s", import_::FormatKgSummary(*kg).c_str());
    std::printf("built in %.2f s\n", seconds);
    if (argc >= 4) {
      if (absl::Status s = import_::WriteTriplesTsv(*kg, argv[3]); !s.ok()) {
        std::fprintf(stderr, "%s\n", s.ToString().c_str());
        return 1;
      }
    }
    if (argc >= 5) {
      if (absl::Status s = import_::WriteEntitiesTsv(*kg, argv[4]); !s.ok()) {
        std::fprintf(stderr, "%s\n", s.ToString().c_str());
        return 1;
      }
    }
    return 0;
  }
  if (command == "synthetic" && (argc == 2 || argc >= 4)) {
    import_::SyntheticKgOptions options;
    if (argc >= 4) {
      options.num_entities = std::strtoll(argv[2], nullptr, 10);
      options.num_triples = std::strtoll(argv[3], nullptr, 10);
    }
    auto start = Clock::now();
    const ibgraphrag::kgstore::KgData kg = import_::GenerateSyntheticPrimeKg(options);
    std::printf("generated %zu entities, %zu triples in %.2f s\n", kg.entities.size(),
                kg.triples.size(), SecondsSince(start));
    if (argc >= 5) {
      start = Clock::now();
      if (absl::Status s = import_::WriteTriplesTsv(kg, argv[4]); !s.ok()) {
        std::fprintf(stderr, "%s\n", s.ToString().c_str());
        return 1;
      }
      std::printf("wrote %s in %.2f s\n", argv[4], SecondsSince(start));
    }
    if (argc >= 6) {
      if (absl::Status s = import_::WriteEntitiesTsv(kg, argv[5]); !s.ok()) {
        std::fprintf(stderr, "%s\n", s.ToString().c_str());
        return 1;
      }
      std::printf("wrote %s\n", argv[5]);
    }
    return 0;
  }
  return Usage();
}
