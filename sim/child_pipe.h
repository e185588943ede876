#pragma once

// What a forked child (a sweep worker, a shrink candidate) uses to hand its
// results to the parent through a pipe.

#include <unistd.h>

#include <string_view>

namespace charybdis::sim {

// Writes all of `bytes` to `fd`, or ends the child with exit code 70 (the
// parent then sees a failed child, not a short answer).
inline void WriteAllOrExit(int fd, std::string_view bytes) {
  for (size_t written = 0; written < bytes.size();) {
    const ssize_t n = write(fd, bytes.data() + written, bytes.size() - written);
    if (n <= 0) _exit(70);
    written += static_cast<size_t>(n);
  }
}

}  // namespace charybdis::sim
