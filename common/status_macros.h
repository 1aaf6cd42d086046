// The two status macros the suite uses everywhere (Debian's Abseil 20220623 has none).
#ifndef IBGRAPHRAG_COMMON_STATUS_MACROS_H_
#define IBGRAPHRAG_COMMON_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Returns from the enclosing function when `expr` (an absl::Status) is not OK.
#define IBGR_RETURN_IF_ERROR(expr)               \
  do {                                           \
    ::absl::Status ibgr_status_ = (expr);        \
    if (!ibgr_status_.ok()) return ibgr_status_; \
  } while (0)

#define IBGR_STATUS_MACROS_CONCAT_INNER_(x, y) x##y
#define IBGR_STATUS_MACROS_CONCAT_(x, y) IBGR_STATUS_MACROS_CONCAT_INNER_(x, y)

// `IBGR_ASSIGN_OR_RETURN(auto value, MaybeValue());` declares/assigns `value` from an
// absl::StatusOr<T>, or returns its status from the enclosing function.
#define IBGR_ASSIGN_OR_RETURN(lhs, rexpr) \
  IBGR_ASSIGN_OR_RETURN_IMPL_(IBGR_STATUS_MACROS_CONCAT_(ibgr_statusor_, __LINE__), lhs, rexpr)
#define IBGR_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr)  \
  auto statusor = (rexpr);                                 \
  if (!statusor.ok()) return std::move(statusor).status(); \
  lhs = std::move(statusor).value()

#endif  // IBGRAPHRAG_COMMON_STATUS_MACROS_H_
