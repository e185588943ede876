#include "core/text_proto.h"

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/tokenizer.h"

namespace charybdis {

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

absl::Status ParseTextProto(const std::string& path, const std::string& text,
                            google::protobuf::Message& message,
                            google::protobuf::TextFormat::ParseInfoTree& locations) {
  ErrorCollector errors(path);
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  parser.WriteLocationsTo(&locations);
  if (!parser.ParseFromString(text, &message)) return absl::InvalidArgumentError(errors.errors());
  return absl::OkStatus();
}

}  // namespace charybdis
