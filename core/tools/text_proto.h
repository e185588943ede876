#pragma once

#include <initializer_list>
#include <string>

#include "absl/status/status.h"
#include "google/protobuf/message.h"
#include "google/protobuf/text_format.h"

namespace charybdis {

// Parses protobuf text format (a scenario, a node config) and records where
// each field stands, so that validators can name "FILE:LINE:COLUMN: field:
// problem". Syntax errors come back as InvalidArgument, one
// "FILE:LINE:COLUMN: message" line each. One parser for sim/ and node/.
absl::Status ParseTextProto(const std::string& path, const std::string& text,
                            google::protobuf::Message& message,
                            google::protobuf::TextFormat::ParseInfoTree& locations);

// One step of a path to a field: its name and, for repeated fields, index.
struct FieldStep {
  const char* field;
  int index = -1;
};

// Collects a validator's "FILE:LINE:COLUMN: field.path: problem" lines for
// a file ParseTextProto parsed. The place is the deepest part of the path
// the file spells out (a field left at its default has no line of its
// own); with none, the line names the file alone.
class TextProtoProblems {
 public:
  TextProtoProblems(std::string path, const google::protobuf::Descriptor* root,
                    const google::protobuf::TextFormat::ParseInfoTree& locations)
      : path_(std::move(path)), root_(root), locations_(locations) {}

  // `steps` from the file's top-level message, e.g. {{"member", 2}, {"id"}}.
  void Add(std::initializer_list<FieldStep> steps, const std::string& problem);

  // The problems, one per line (empty when there are none).
  const std::string& text() const { return text_; }

 private:
  std::string path_;
  const google::protobuf::Descriptor* root_;
  const google::protobuf::TextFormat::ParseInfoTree& locations_;
  std::string text_;
};

}  // namespace charybdis
