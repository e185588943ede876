#pragma once

// The protocol's [consistency] codes (section 3) and our levels.

#include <cstdint>
#include <optional>

#include "proto/client.pb.h"

namespace charybdis::cql {

inline std::optional<ConsistencyLevel> FromCqlConsistency(uint16_t code) {
  switch (code) {
    case 0x0000: return CL_ANY;
    case 0x0001: return CL_ONE;
    case 0x0002: return CL_TWO;
    case 0x0003: return CL_THREE;
    case 0x0004: return CL_QUORUM;
    case 0x0005: return CL_ALL;
    case 0x0006: return CL_LOCAL_QUORUM;
    case 0x0007: return CL_EACH_QUORUM;
    case 0x0008: return CL_SERIAL;
    case 0x0009: return CL_LOCAL_SERIAL;
    case 0x000A: return CL_LOCAL_ONE;
    default: return std::nullopt;
  }
}

inline uint16_t ToCqlConsistency(ConsistencyLevel level) {
  switch (level) {
    case CL_ANY: return 0x0000;
    case CL_TWO: return 0x0002;
    case CL_THREE: return 0x0003;
    case CL_QUORUM: return 0x0004;
    case CL_ALL: return 0x0005;
    case CL_LOCAL_QUORUM: return 0x0006;
    case CL_EACH_QUORUM: return 0x0007;
    case CL_SERIAL: return 0x0008;
    case CL_LOCAL_SERIAL: return 0x0009;
    case CL_LOCAL_ONE: return 0x000A;
    default: return 0x0001;
  }
}

}  // namespace charybdis::cql
