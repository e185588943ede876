#pragma once

// Assertions that stay on in optimised builds: a wrong database is worse than
// a stopped one. Split compound conditions so a failure names the half that
// broke.

#include <cstdio>
#include <cstdlib>

#define CHARYBDIS_ASSERT(condition)                                        \
  do {                                                                     \
    if (!(condition)) {                                                    \
      std::fprintf(stderr, "%s:%d: assertion failed: %s\n", __FILE__,      \
                   __LINE__, #condition);                                  \
      std::abort();                                                        \
    }                                                                      \
  } while (false)
