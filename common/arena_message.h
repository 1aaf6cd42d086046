// A protobuf message for one call's scratch work that lives where the call's response lives.
//
// A handler whose response is on an arena (common/blocking_reactor.h gives typed handlers one)
// builds intermediate messages (a downstream response, a request lent evidence) whose parts end
// up in the response or are swapped with it. On the response's arena those moves and swaps are
// pointer swaps, and everything is freed at once with the arena; on the heap, protobuf would
// deep-copy across the two. Without an arena (a caller with a heap response, as in tests) the
// message is on the heap and freed with this holder.
//
//   common::ArenaMessage<pb::RetrieveResponse> retrieved(response->GetArena());
//   stub->Retrieve(context, request, retrieved.get());
//   *response->mutable_evidence() = std::move(*retrieved->mutable_triples());  // no copy
#ifndef IBGRAPHRAG_COMMON_ARENA_MESSAGE_H_
#define IBGRAPHRAG_COMMON_ARENA_MESSAGE_H_

#include <memory>

#include "google/protobuf/arena.h"

namespace ibgraphrag::common {

template <typename Message>
class ArenaMessage {
 public:
  explicit ArenaMessage(google::protobuf::Arena* arena)
      : message_(google::protobuf::Arena::CreateMessage<Message>(arena)),
        owned_(arena == nullptr ? message_ : nullptr) {}
  ArenaMessage(const ArenaMessage&) = delete;
  ArenaMessage& operator=(const ArenaMessage&) = delete;

  Message* get() const { return message_; }
  Message* operator->() const { return message_; }
  Message& operator*() const { return *message_; }

 private:
  Message* message_;                // on the arena, or owned_
  std::unique_ptr<Message> owned_;  // set when there is no arena
};

}  // namespace ibgraphrag::common

#endif  // IBGRAPHRAG_COMMON_ARENA_MESSAGE_H_
