#pragma once

// Runs a program of the build as a user would, from a test: its exit code
// and everything it printed.

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace charybdis::testing {

struct CommandRun {
  int exit_code;
  std::string output;  // stdout and stderr
};

// `command`: a program in the test's runfiles (e.g. "sim/charybdis_sim")
// and its arguments, run by the shell.
inline CommandRun RunCommand(const std::string& command) {
  std::FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  std::string output;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, n);
  const int status = pclose(pipe);
  return CommandRun{WEXITSTATUS(status), output};
}

}  // namespace charybdis::testing
