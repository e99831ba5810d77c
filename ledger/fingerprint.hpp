// A node's fingerprint in the ledger: the identity.* and software.* facts of node.fingerprint
// (plugins/node/fingerprint.hpp), each half with a SHA-256 digest of its canonical JSON. A changed
// identity digest means another board, GPU or NIC, or a reimage (new machine-id); a changed
// software digest a new kernel, driver, firmware, CUDA or NCCL. Either voids the node's
// certification until it passes again.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace preflight::ledger {

struct Fingerprint {
    std::map<std::string, std::string> identity;  // keys without the "identity." prefix
    std::map<std::string, std::string> software;  // keys without the "software." prefix
    bool empty() const { return identity.empty() && software.empty(); }
    std::string identity_digest() const;
    std::string software_digest() const;
};

Fingerprint fingerprint_from_facts(const std::map<std::string, std::string>& facts);

// SHA-256 of the map's canonical JSON (sorted keys), hex; "" for an empty map.
std::string digest_of(const std::map<std::string, std::string>& values);

struct FactChange {
    std::string key;   // "identity.dmi.product_serial", "software.kernel"
    std::string from;  // "" when absent before
    std::string to;    // "" when absent now
};

std::vector<FactChange> fingerprint_changes(const Fingerprint& before, const Fingerprint& after);

}  // namespace preflight::ledger
