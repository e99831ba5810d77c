// Process-wide MPI world record (see the header). Written once before any check runs.
#include "plugins/collective/mpi_world.hpp"

#include <memory>

namespace preflight::plugins {

namespace {
std::unique_ptr<MpiWorld> g_world;
}

int MpiWorld::rank_of(const std::string& node) const {
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        if (nodes[i] == node) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

void set_mpi_world(MpiWorld world) {
    g_world = std::make_unique<MpiWorld>(std::move(world));
}

const MpiWorld* mpi_world() {
    return g_world.get();
}

}  // namespace preflight::plugins
