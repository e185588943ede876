#include "core/cql/event.h"

#include "core/env/assert.h"
#include "core/cql/wire.h"

namespace charybdis::cql {

Event NodeEvent(std::string type, std::string_view change, std::string_view address, int32_t port) {
  CHARYBDIS_ASSERT(address.size() == 4 || address.size() == 16);
  Writer out;
  out.String(change);
  out.Byte(static_cast<uint8_t>(address.size()));
  out.Raw(address);
  out.Int(port);
  return {std::move(type), out.Take()};
}

Event SchemaEvent(const SchemaChange& change) {
  Writer out;
  WriteSchemaChange(out, change);
  return {"SCHEMA_CHANGE", out.Take()};
}

}  // namespace charybdis::cql
