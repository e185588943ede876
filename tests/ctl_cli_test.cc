// Runs charybdis-ctl as a user would, for what needs no cluster: its help
// and its answers to bad usage.

#include <gtest/gtest.h>

#include <string>

#include "tests/command_run.h"

namespace charybdis {
namespace {

using CtlRun = testing::CommandRun;

CtlRun Ctl(const std::string& arguments) { return testing::RunCommand("node/charybdis-ctl " + arguments); }

const char* const kCommands[] = {"put",     "get",   "delete",    "cas",     "serial-get",   "status",
                                 "ring",    "metrics", "bench",   "calibrate", "cluster", "run-scenario"};

TEST(CtlCliTest, HelpListsEveryCommandWithALine) {
  const CtlRun run = Ctl("--help");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  for (const char* command : kCommands) {
    EXPECT_NE(run.output.find(std::string("\n  ") + command + " "), std::string::npos) << command;
  }
  EXPECT_EQ(run.output.find("ctl_main.cc"), std::string::npos);  // no pointer at a source file
}

TEST(CtlCliTest, EveryCommandExplainsItselfWithHelp) {
  for (const char* command : kCommands) {
    const CtlRun run = Ctl(std::string(command) + " --help");
    EXPECT_EQ(run.exit_code, 0) << command << ": " << run.output;
    EXPECT_NE(run.output.find(std::string("usage: charybdis-ctl")), std::string::npos) << command;
    EXPECT_NE(run.output.find(std::string(" ") + command), std::string::npos) << command;
  }
}

TEST(CtlCliTest, NoCommandOrAnUnknownOneIsBadUsage) {
  EXPECT_EQ(Ctl("").exit_code, 2);
  const CtlRun unknown = Ctl("frobnicate");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.output.find("unknown command \"frobnicate\""), std::string::npos) << unknown.output;
  EXPECT_EQ(Ctl("frobnicate --help").exit_code, 2);
}

TEST(CtlCliTest, SwitchesTakeNoValue) {
  // A switch before --dir must leave --dir its value: the error names the
  // directory given, not the default one.
  for (const char* flag : {"--ports", "--power", "--keep"}) {
    const CtlRun run = Ctl(std::string("cluster down ") + flag + " --dir /nonexistent/ctl-cli-test");
    EXPECT_EQ(run.exit_code, 2) << flag << ": " << run.output;
    EXPECT_NE(run.output.find("/nonexistent/ctl-cli-test"), std::string::npos) << flag << ": " << run.output;
  }
}

}  // namespace
}  // namespace charybdis
