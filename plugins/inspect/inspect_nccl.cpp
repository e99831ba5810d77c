// `preflight inspect nccl-tests` and `preflight inspect nccl-log`: exec.nccl_tests' reading and
// verdict of a saved nccl-tests run, and the NIC-use rule of the NCCL checks on a saved
// NCCL_DEBUG=INFO log.
#include <algorithm>

#include "plugins/collective/nccl_net_usage.hpp"
#include "plugins/exec/nccl_tests_parser.hpp"
#include "plugins/inspect/readers.hpp"

namespace preflight::plugins::inspect {

namespace {

using core::ParamType;

std::string join(const std::vector<std::string>& items, const std::string& none = "none") {
    std::string out;
    for (const auto& item : items) {
        out += (out.empty() ? "" : ", ") + item;
    }
    return out.empty() ? none : out;
}

std::string_view transport_name(NetTransport t) {
    switch (t) {
        case NetTransport::ib:
            return "IB (RDMA)";
        case NetTransport::socket:
            return "sockets";
        case NetTransport::plugin:
            return "network plugin";
        case NetTransport::unknown:
            return "unknown";
    }
    return "unknown";
}

// One line per host: what its lines said.
std::vector<std::string> describe(const NetUsage& usage) {
    std::vector<std::string> out;
    for (const auto& h : usage.hosts) {
        std::vector<std::string> devices;
        for (const auto& d : h.ib_devices) {
            devices.push_back(d.label() + "/" + d.link);
        }
        std::string line = "host " +
                           (h.host.empty() ? std::string("(no host in prefix)") : h.host) +
                           ": transport " + std::string(transport_name(h.transport()));
        if (!h.networks.empty()) {
            line += "; Using network " + join(h.networks);
        }
        if (h.ib_listed) {
            line +=
                "; NET/IB " + std::to_string(h.ib_devices.size()) + " port(s): " + join(devices);
        }
        if (h.ib_no_device) {
            line += "; NET/IB : No device found";
        }
        if (!h.socket_ifs.empty()) {
            line += "; NET/Socket: " + join(h.socket_ifs);
        }
        if (!h.ofi_provider.empty()) {
            line += "; NET/OFI provider " + h.ofi_provider +
                    (h.ofi_nics >= 0 ? " (" + std::to_string(h.ofi_nics) + " NICs)" : "");
        }
        if (!h.ib_hca.empty()) {
            line += "; NCCL_IB_HCA " + h.ib_hca;
        }
        if (h.ib_disabled) {
            line += "; NCCL_IB_DISABLE set";
        }
        if (!h.unfamiliar.empty()) {
            line += "; unfamiliar: " + h.unfamiliar;
        }
        out.push_back(std::move(line));
    }
    return out;
}

bool looks_like_json(std::string_view text) {
    const auto first = text.find_first_not_of(" \t\r\n");
    return first != std::string_view::npos && text[first] == '{';
}

core::Result<Inspection> judge_nccl_tests_files(const std::vector<Input>& inputs,
                                                const nlohmann::json& options) {
    const long long bytes = options.at("bytes").get<long long>();
    const long long nics = options.at("expect_rdma_nics").get<long long>();
    if (bytes < 0 || nics < 0) {
        return core::Error{"--bytes and --expect-rdma-nics must not be negative"};
    }
    std::string_view text = inputs.at(0).text;
    std::optional<std::string_view> json;
    if (inputs.size() > 1) {
        json = inputs[1].text;
    } else if (looks_like_json(text)) {
        json = text;  // the -J document alone
        text = {};
    }
    if (text.find_first_not_of(" \t\r\n") == std::string_view::npos && !json) {
        return core::Error{inputs[0].path + " is empty"};
    }
    Inspection out;
    const auto reading = read_nccl_tests(text, json, bytes);
    out.result = judge_nccl_tests_reading(reading, bytes);
    const auto& o = reading.output;
    std::vector<std::string> sizes;
    for (const auto& r : o.rows) {
        if (std::find(sizes.begin(), sizes.end(), std::to_string(r.size)) == sizes.end()) {
            sizes.push_back(std::to_string(r.size));
        }
    }
    out.read.push_back("nccl-tests " + reading.source + ": " + std::to_string(o.rows.size()) +
                       " row(s) at " + join(sizes) + " bytes; " + std::to_string(o.ranks) +
                       " rank line(s); " + std::to_string(o.tables) + " table(s)" +
                       (o.concluded ? "; concluded" : ""));
    const auto usage = parse_nccl_net_lines(text);
    for (auto& line : describe(usage)) {
        out.read.push_back(std::move(line));
    }
    if (nics > 0) {
        NetExpectation e;
        e.rdma_nics = static_cast<int>(nics);
        e.from_param = true;
        e.host = options.at("host").get<std::string>();
        fold_net_verdict(out.result, judge_net_usage(usage, e));
    }
    return out;
}

core::Result<Inspection> judge_nccl_log(const std::vector<Input>& inputs,
                                        const nlohmann::json& options) {
    const auto& log = inputs.at(0);
    if (log.text.find(" NCCL INFO ") == std::string::npos) {
        return core::Error{log.path +
                           " holds no \"NCCL INFO\" line: is it the output of a run with "
                           "NCCL_DEBUG=INFO (or its NCCL_DEBUG_FILE)?"};
    }
    const long long nics = options.at("expect_rdma_nics").get<long long>();
    if (nics < -1) {
        return core::Error{"--expect-rdma-nics must be -1 (not known) or a count"};
    }
    NetExpectation e;
    e.rdma_nics = static_cast<int>(nics);
    e.from_param = nics >= 0;
    e.host = options.at("host").get<std::string>();
    const std::map<std::string, std::string> env = {
        {"NCCL_IB_HCA", options.at("nccl_ib_hca").get<std::string>()},
        {"NCCL_NET", options.at("nccl_net").get<std::string>()},
        {"NCCL_IB_DISABLE", options.at("nccl_ib_disable").get<std::string>()},
        {"FI_PROVIDER", options.at("fi_provider").get<std::string>()},
    };
    read_nccl_environment(e, [&](const std::string& name) -> std::optional<std::string> {
        const auto it = env.find(name);
        return it == env.end() || it->second.empty() ? std::nullopt
                                                     : std::optional<std::string>(it->second);
    });
    const auto usage = parse_nccl_net_lines(log.text);
    const auto verdict = judge_net_usage(usage, e);
    Inspection out;
    out.read = describe(usage);
    out.result.detail = verdict.finding;
    if (verdict.used >= 0) {
        out.result.metrics["nccl_rdma_nics"] = verdict.used;
    }
    switch (verdict.kind) {
        case NetVerdictKind::pass:
            out.result.verdict = core::Verdict::pass;
            break;
        case NetVerdictKind::fail:
            out.result.verdict = core::Verdict::fail;
            break;
        case NetVerdictKind::inconclusive:
            out.result.verdict = core::Verdict::warn;
            out.result.undecided = core::Undecided::inconclusive;
            break;
        case NetVerdictKind::none:
            out.result.verdict = core::Verdict::error;
            out.result.detail = "NCCL NIC use unknown: " + verdict.finding;
            break;
    }
    return out;
}

}  // namespace

Reader nccl_tests_reader() {
    return {
        .kind = "nccl-tests",
        .summary =
            "a saved nccl-tests run (text output, and/or its -J document): the row at "
            "--bytes judged as exec.nccl_tests judges it",
        .check = "exec.nccl_tests",
        .inputs = {"OUTPUT", "JSON?"},
        .options =
            {
                {"bytes", ParamType::integer, 0LL,
                 "the size whose row is judged; 0: the largest size in the output", "B"},
                {"expect_rdma_nics", ParamType::integer, 0LL,
                 "RDMA ports NCCL must use, judged from the NET/IB lines in OUTPUT; 0: off"},
                {"host", ParamType::string, "",
                 "judge only this host's NCCL lines (empty: every host in the output)"},
            },
        .judge = &judge_nccl_tests_files,
    };
}

Reader nccl_log_reader() {
    return {
        .kind = "nccl-log",
        .summary =
            "a saved NCCL_DEBUG=INFO log: which network and RDMA ports NCCL used, judged "
            "by the NCCL checks' NIC-use rule",
        .check = "collective.nccl_allreduce",
        .inputs = {"LOG"},
        .options =
            {
                {"expect_rdma_nics", ParamType::integer, -1LL,
                 "RDMA ports NCCL must use (0: none expected); -1: not known, so what NCCL used "
                 "is reported but not judged"},
                {"host", ParamType::string, "",
                 "judge only this host's lines (empty: every host, the worst wins)"},
                {"nccl_ib_hca", ParamType::string, "",
                 "NCCL_IB_HCA of the run, when its log does not say"},
                {"nccl_net", ParamType::string, "", "NCCL_NET of the run (Socket: asked for)"},
                {"nccl_ib_disable", ParamType::string, "", "NCCL_IB_DISABLE of the run"},
                {"fi_provider", ParamType::string, "",
                 "FI_PROVIDER of the run (tcp: libfabric over TCP asked for)"},
            },
        .judge = &judge_nccl_log,
    };
}

}  // namespace preflight::plugins::inspect
