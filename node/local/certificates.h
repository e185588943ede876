#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace charybdis::node {

// The throwaway certificates of a local cluster with TLS
// (`charybdis-ctl cluster up --tls`; docs/security.md), made with Debian's
// openssl command: never a production CA.

// DIRECTORY/ca.pem (the certificate everyone checks against) and
// DIRECTORY/ca.key (mode 600, kept to sign nodes added later).
absl::Status MakeCertificateAuthority(const std::string& directory);

// PREFIX.pem and PREFIX.key (mode 600): a certificate for a node that
// listens on `hosts` (IPv4 addresses, in its subjectAltName so that
// drivers and gRPC that check the server's address accept it), signed by
// the CA in `ca_directory`, good for servers and clients both (internode
// TLS is mutual).
absl::Status MakeNodeCertificate(const std::string& ca_directory, const std::string& prefix,
                                 const std::string& common_name, const std::vector<std::string>& hosts);

}  // namespace charybdis::node
