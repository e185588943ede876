#include "sim/scenario_loader.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"
#include "sim/scenario_validator.h"

namespace charybdis::sim {

namespace {

// Turns the parser's complaints into "FILE:LINE:COLUMN: message" lines.
class ErrorCollector final : public google::protobuf::io::ErrorCollector {
 public:
  explicit ErrorCollector(std::string path) : path_(std::move(path)) {}

  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    absl::StrAppend(&errors_, errors_.empty() ? "" : "\n", path_, ":", line + 1, ":",
                    column + 1, ": ", message);
  }
  void AddWarning(int line, google::protobuf::io::ColumnNumber column,
                  const std::string& message) override {
    AddError(line, column, message);
  }

  const std::string& errors() const { return errors_; }

 private:
  std::string path_;
  std::string errors_;
};

}  // namespace

absl::StatusOr<LoadedScenario> LoadScenario(const std::string& path) {
  std::ifstream file(path);
  if (!file) return absl::NotFoundError(absl::StrCat(path, ": cannot open scenario file"));
  std::stringstream text;
  text << file.rdbuf();
  return ParseScenario(path, text.str());
}

absl::StatusOr<LoadedScenario> ParseScenario(const std::string& path, const std::string& text) {
  LoadedScenario loaded;
  loaded.path = path;
  ErrorCollector errors(path);
  google::protobuf::TextFormat::ParseInfoTree locations;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  parser.WriteLocationsTo(&locations);
  if (!parser.ParseFromString(text, &loaded.spec)) {
    return absl::InvalidArgumentError(errors.errors());
  }
  const std::string problems = ValidateScenario(path, loaded.spec, locations);
  if (!problems.empty()) {
    return absl::InvalidArgumentError(problems.substr(0, problems.size() - 1));
  }
  scenario::FailureDetector* detector = loaded.spec.mutable_failure_detector();
  if (detector->heartbeat_interval_ms() == 0) {
    detector->set_heartbeat_interval_ms(kDefaultHeartbeatIntervalMs);
  }
  if (detector->convict_after_ms() == 0) detector->set_convict_after_ms(kDefaultConvictAfterMs);
  loaded.topology = Topology::From(loaded.spec.topology());
  return loaded;
}

}  // namespace charybdis::sim
