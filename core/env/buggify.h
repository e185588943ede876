#pragma once

#include <string_view>

namespace charybdis {

// FoundationDB's BUGGIFY as an injected hook: core/ asks "should this rare
// path run now?" at named sites and never asks whether it is simulated.
// Production answers no; the simulator answers yes at random for the sites a
// seed enabled.
class Buggify {
 public:
  virtual ~Buggify() = default;
  virtual bool Fires(std::string_view site) = 0;
};

class NeverBuggify final : public Buggify {
 public:
  bool Fires(std::string_view) override { return false; }
};

}  // namespace charybdis
