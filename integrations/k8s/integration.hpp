// The k8s integration: its row of the registry (integrations/registry.cpp).
#pragma once

#include "controller/commands/integration.hpp"

namespace preflight::integrations {

Integration k8s_integration();

}  // namespace preflight::integrations
