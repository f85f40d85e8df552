// SPDX-License-Identifier: Apache-2.0
// Hand-offs to event loops gathered over a batch: while a ReplyScope is open on a thread (a batch
// thread finishing the requests of one merged run), each reply the HTTP layer would post to a
// connection's event loop is queued instead, and when the outermost scope closes every event loop
// gets all of its replies in one hand-off. One post per batch instead of one per request: each
// post takes the event loop's queue lock (which the loop itself takes for every handler it runs)
// and may wake it.
#pragma once

#include <functional>
#include <vector>

namespace kiln::engine::serve {

class ReplyScope {
public:
    ReplyScope();
    ~ReplyScope();  // the outermost scope delivers what was deferred, in order, per target
    ReplyScope(const ReplyScope&) = delete;
    ReplyScope& operator=(const ReplyScope&) = delete;

    // Delivers the replies deferred for one target (`target`, `context` as given to defer).
    using Flush = void (*)(void* target, void* context, std::vector<std::function<void()>>&& replies);

    // With a scope open on this thread, queues `reply` for `target` and returns true: at the close
    // of the outermost scope, flush(target, context, replies) gets every reply queued for that
    // target, in the order they came (targets are flushed in the order they were first named).
    // Without a scope it returns false and leaves `reply` untouched, for the caller to deliver.
    static bool defer(void* target, Flush flush, void* context, std::function<void()>& reply);
};

}  // namespace kiln::engine::serve
