// The ssh integration: its row of the registry (integrations/registry.cpp).
#pragma once

#include "controller/commands/integration.hpp"

namespace preflight::integrations {

Integration ssh_integration();

}  // namespace preflight::integrations
