#pragma once

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

}  // namespace charybdis
