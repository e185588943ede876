#pragma once

#include <functional>
#include <utility>

namespace charybdis::node {

// Calls `done` exactly once: with the answer, or with `fallback` if the
// work carrying it is dropped (a stopping thread's queue) before it answers.
template <typename T>
class AnswerOnce {
 public:
  AnswerOnce(std::function<void(T)> done, T fallback)
      : done_(std::move(done)), fallback_(std::move(fallback)) {}
  ~AnswerOnce() {
    if (done_) done_(std::move(fallback_));
  }
  void Send(T answer) {
    auto done = std::move(done_);
    done_ = nullptr;
    done(std::move(answer));
  }

 private:
  std::function<void(T)> done_;
  T fallback_;
};

}  // namespace charybdis::node
