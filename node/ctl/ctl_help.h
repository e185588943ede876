#pragma once

// What `charybdis-ctl --help` and `charybdis-ctl COMMAND --help` print.

#include <optional>
#include <string>
#include <string_view>

namespace charybdis::node {

// Every command with one line each, and the flags every command takes.
std::string CtlOverview();
// One command's usage and flags; nullopt for an unknown command.
std::optional<std::string> CtlCommandHelp(std::string_view command);

}  // namespace charybdis::node
