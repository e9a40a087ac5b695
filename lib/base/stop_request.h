// SPDX-License-Identifier: GPL-2.0-only
// StopRequest: how a write job is asked to stop early (issue 13: SIGINT,
// SIGTERM, SIGHUP). Level 1: after the step in progress commits, between
// steps (the batch runner checks it); level 2: at the next safe point inside
// a step, which is abandoned (its transaction aborts: nothing of it was
// written, the filesystem stays at the last commit, crash-consistent as
// always). Raised from a signal handler: a lock-free atomic only.
#pragma once
#include <atomic>

namespace fsctl {

struct StopRequest {
  std::atomic<int> level{0};
  /// Stop between steps (the first request).
  [[nodiscard]] bool between_steps() const { return level.load(std::memory_order_relaxed) >= 1; }
  /// Stop at the next safe point inside a step (the second request).
  [[nodiscard]] bool now() const { return level.load(std::memory_order_relaxed) >= 2; }
};
static_assert(std::atomic<int>::is_always_lock_free);

}  // namespace fsctl
