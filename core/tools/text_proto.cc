#include "core/tools/text_proto.h"

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

void TextProtoProblems::Add(std::initializer_list<FieldStep> steps, const std::string& problem) {
  const google::protobuf::Descriptor* descriptor = root_;
  const google::protobuf::TextFormat::ParseInfoTree* tree = &locations_;
  std::string where = path_;
  std::string name;
  for (const FieldStep& step : steps) {
    absl::StrAppend(&name, name.empty() ? "" : ".", step.field);
    if (step.index >= 0) absl::StrAppend(&name, "[", step.index, "]");
    const google::protobuf::FieldDescriptor* field =
        descriptor == nullptr ? nullptr : descriptor->FindFieldByName(step.field);
    if (field == nullptr || tree == nullptr) continue;
    // A repeated field named as a whole has no single location.
    if (field->is_repeated() != (step.index >= 0)) {
      tree = nullptr;
      continue;
    }
    const google::protobuf::TextFormat::ParseLocation location = tree->GetLocation(field, step.index);
    if (location.line >= 0) where = absl::StrCat(path_, ":", location.line + 1, ":", location.column + 1);
    tree = field->message_type() ? tree->GetTreeForNested(field, step.index) : nullptr;
    descriptor = field->message_type();
  }
  absl::StrAppend(&text_, text_.empty() ? "" : "\n", where, ": ", name, ": ", problem);
}

}  // namespace charybdis
