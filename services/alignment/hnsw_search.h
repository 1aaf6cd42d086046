// The name index's HNSW search, done here rather than by faiss::IndexHNSW::search.
//
// FAISS 1.7.3 (Debian's) computes a query's distances one neighbour at a time. Each is a dot
// product with a 1 KiB row of a ~130 MB table (the embedded lexicon's 130,190 names at d=256),
// so a search waited on main memory for one row after another: the name search was 17 % of the
// all-in-one's CPU at 16 clients. This search walks the same graph by the same algorithm
// (greedy descent on the upper levels, FAISS's bounded MinimaxHeap beam at level 0 with its
// relative-distance stop, the same result heap and tie order) and first collects an expanded
// node's unvisited neighbours and prefetches their rows, so the cache misses overlap. Its results
// equal IndexHNSW::search's bit for bit (hnsw_search_test compares them on thousands of
// queries); only the time differs.
#ifndef IBGRAPHRAG_SERVICES_ALIGNMENT_HNSW_SEARCH_H_
#define IBGRAPHRAG_SERVICES_ALIGNMENT_HNSW_SEARCH_H_

#include <faiss/Index.h>
#include <faiss/impl/AuxIndexStructures.h>

#include <cstddef>

namespace faiss {
struct IndexHNSW;
}  // namespace faiss

namespace ibgraphrag::alignment {

// Gives an inner-product IndexHNSW over flat rows the suite's SIMD Dot as its distance (FAISS's
// Debian build has a scalar kernel), for building and for FAISS's own search; moves the rows,
// and the index is written to disk exactly as before. Anything else is left as it is.
void UseSimdInnerProductStorage(faiss::IndexHNSW* index);

// Whether SearchHnswInnerProduct can search `index`: an inner-product IndexHNSW whose storage
// UseSimdInnerProductStorage set (so both searches compute the same floats), with FAISS's
// default search settings (one upper beam, bounded queue, relative-distance stop).
bool CanSearchHnswInnerProduct(const faiss::IndexHNSW& index);

// Top `k` rows of `index` by inner product with `query` (index.d floats), best first, as
// IndexHNSW::search with SearchParametersHNSW{efSearch = ef_search} writes them: `distances`
// and `labels` hold k entries, unfilled ones -1 with distance -FLT_MAX. `visited` must have at
// least index.ntotal entries; it is advanced, so one table serves many searches. Requires
// CanSearchHnswInnerProduct(index) and ef_search == max(index.hnsw.efSearch, k), as
// CandidateIndex::Search asks (FAISS sizes the beam by the one and stops by the other).
// Returns the distances computed at level 0, FAISS's hnsw_stats.n3 for the same search.
size_t SearchHnswInnerProduct(const faiss::IndexHNSW& index, const float* query, int k,
                              int ef_search, float* distances, faiss::Index::idx_t* labels,
                              faiss::VisitedTable* visited);

}  // namespace ibgraphrag::alignment

#endif  // IBGRAPHRAG_SERVICES_ALIGNMENT_HNSW_SEARCH_H_
