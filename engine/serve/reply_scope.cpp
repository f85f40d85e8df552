// SPDX-License-Identifier: Apache-2.0
#include "engine/serve/reply_scope.h"

#include <utility>

namespace kiln::engine::serve {

namespace {

struct Pending {
    void* target = nullptr;
    ReplyScope::Flush flush = nullptr;
    void* context = nullptr;
    std::vector<std::function<void()>> replies;
};

struct ThreadScopes {
    int depth = 0;
    std::vector<Pending> pending;  // one entry per target named since the outermost scope opened
};

thread_local ThreadScopes t_scopes;

}  // namespace

ReplyScope::ReplyScope() { ++t_scopes.depth; }

ReplyScope::~ReplyScope() {
    if (--t_scopes.depth > 0) return;
    // Taken out first: a flush may itself open a scope on this thread.
    std::vector<Pending> pending = std::move(t_scopes.pending);
    t_scopes.pending.clear();
    for (Pending& p : pending) p.flush(p.target, p.context, std::move(p.replies));
}

bool ReplyScope::defer(void* target, Flush flush, void* context, std::function<void()>& reply) {
    if (t_scopes.depth == 0) return false;
    for (Pending& p : t_scopes.pending)
        if (p.target == target && p.flush == flush && p.context == context) {
            p.replies.push_back(std::move(reply));
            return true;
        }
    Pending p{target, flush, context, {}};
    p.replies.push_back(std::move(reply));
    t_scopes.pending.push_back(std::move(p));
    return true;
}

}  // namespace kiln::engine::serve
