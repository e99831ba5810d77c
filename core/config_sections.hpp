// The tables of the run configuration's sections (core/config_schema.hpp), one function each;
// builtin_sections() (core/config.hpp, defined in core/config.cpp) lists them for the loader. A
// section owned by a scheduler's wing is declared in its own file so that it moves with the wing:
// k8s (core/config_k8s.cpp), launch.slurm (core/config_launch_slurm.cpp), launch.ssh
// (core/config_launch_ssh.cpp).
#pragma once

#include <vector>

#include "core/config_schema.hpp"

namespace preflight::core::config {

Section top_level_section();  // checks, params (core/config.cpp)
Section evaluation_section();
Section actions_section();
Section deadlines_section();
Section controller_section();
Section controller_tls_section();
Section job_section();
Section launch_section();
Section ledger_section();               // core/config_ledger.cpp
Section ledger_self_history_section();  // core/config_ledger.cpp
Section k8s_section();                  // core/config_k8s.cpp
Section launch_slurm_section();         // core/config_launch_slurm.cpp
Section launch_ssh_section();           // core/config_launch_ssh.cpp

}  // namespace preflight::core::config
