// The slurm integration: its row of the registry (integrations/registry.cpp).
#pragma once

#include "controller/commands/integration.hpp"

namespace preflight::integrations {

Integration slurm_integration();

}  // namespace preflight::integrations
