// The two ethtool ioctls link.pause reads (SIOCETHTOOL): an interface's statistics by name
// (ETHTOOL_GSSET_INFO + ETHTOOL_GSTRINGS + ETHTOOL_GSTATS) and its driver's name
// (ETHTOOL_GDRVINFO). Both see the interfaces of the calling thread's network namespace.
#pragma once

#include <map>
#include <string>

#include "core/result.hpp"

namespace preflight::plugins::ethtool {

// All ethtool statistics of an interface by name. Error when the interface does not exist or
// the socket/ioctl fails; an empty map when the driver has no statistics (EOPNOTSUPP).
core::Result<std::map<std::string, unsigned long long>> read_stats(const std::string& ifname);

// The driver's name as ethtool -i prints it ("mlx5_core", "veth"). Error when the interface does
// not exist or the ioctl fails.
core::Result<std::string> read_driver(const std::string& ifname);

}  // namespace preflight::plugins::ethtool
