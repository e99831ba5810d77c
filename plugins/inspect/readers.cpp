// The reader table of `preflight inspect`: one row per kind of saved output.
#include "plugins/inspect/readers.hpp"

namespace preflight::plugins::inspect {

const std::vector<Reader>& readers() {
    static const std::vector<Reader> table = {
        nccl_tests_reader(), nccl_log_reader(), ethtool_reader(),
        kernel_log_reader(), dcgm_reader(),
    };
    return table;
}

}  // namespace preflight::plugins::inspect
