// SPDX-License-Identifier: Apache-2.0
// Model summary computation and formatting.
#include "engine/ops/summary.h"

#include <algorithm>
#include <cstdio>

namespace kiln::engine::ops {

ModelSummary summarize(const ModelInfo& m, int64_t batch) {
    ModelSummary s;
    s.batch = batch;
    for (int i : m.order) {
        const auto& ni = m.nodes[static_cast<size_t>(i)];
        const auto& node = m.graph.nodes[static_cast<size_t>(i)];
        SummaryRow r;
        r.name = node.name;
        r.op = node.op;
        r.output = ni.output;
        r.inputs = node.inputs;
        if (ni.paramOwner != i) {
            r.sharedWith = m.graph.nodes[static_cast<size_t>(ni.paramOwner)].name;
        } else {
            for (const auto& p : ni.params) {
                if (p.trainable && ni.trainable) r.trainableParams += p.shape.numel();
                else r.frozenParams += p.shape.numel();
            }
        }
        r.macs = ni.macs * batch;
        r.activationBytes = ni.output.withBatch(batch).numel() * static_cast<int64_t>(sizeof(float));
        s.trainableParams += r.trainableParams;
        s.frozenParams += r.frozenParams;
        s.macs += r.macs;
        s.activationBytes += r.activationBytes;
        s.rows.push_back(std::move(r));
    }
    s.parameterBytes = (s.trainableParams + s.frozenParams) * static_cast<int64_t>(sizeof(float));
    return s;
}

std::string groupDigits(int64_t n) {
    std::string d = std::to_string(n < 0 ? -n : n), out;
    for (size_t i = 0; i < d.size(); ++i) {
        if (i > 0 && (d.size() - i) % 3 == 0) out += ',';
        out += d[i];
    }
    return n < 0 ? "-" + out : out;
}

std::string humanBytes(int64_t bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = static_cast<double>(bytes);
    int u = 0;
    while (v >= 1024.0 && u < 4) {
        v /= 1024.0;
        ++u;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.2f %s", v, units[u]);
    return buf;
}

std::string summaryText(const ModelSummary& s, const std::string& title) {
    auto pad = [](std::string t, size_t w) {
        if (t.size() < w) t += std::string(w - t.size(), ' ');
        return t;
    };
    size_t wName = 18, wShape = 16;
    for (const auto& r : s.rows) {
        wName = std::max(wName, r.name.size() + r.op.size() + 4);
        wShape = std::max(wShape, r.output.toString().size() + 2);
    }
    const size_t wParam = 14, wMacs = 14;
    std::string line(wName + wShape + wParam + wMacs + 24, '=');
    std::string out;
    if (!title.empty()) out += "Model: \"" + title + "\"\n";
    out += line + "\n";
    out += pad("Layer (type)", wName) + pad("Output Shape", wShape) + pad("Param #", wParam) + pad("MACs", wMacs) +
           "Connected to\n";
    out += line + "\n";
    for (const auto& r : s.rows) {
        int64_t params = r.trainableParams + r.frozenParams;
        std::string p = r.sharedWith.empty() ? groupDigits(params) : "shared";
        std::string conn;
        for (const auto& in : r.inputs) conn += (conn.empty() ? "" : ", ") + in;
        if (!r.sharedWith.empty()) conn += (conn.empty() ? "" : " ") + std::string("(weights of ") + r.sharedWith + ")";
        out += pad(r.name + " (" + r.op + ")", wName) + pad(r.output.toString(), wShape) + pad(p, wParam) +
               pad(groupDigits(r.macs), wMacs) + conn + "\n";
    }
    out += line + "\n";
    int64_t total = s.trainableParams + s.frozenParams;
    out += "Total params: " + groupDigits(total) + " (" + humanBytes(total * 4) + ")\n";
    out += "Trainable params: " + groupDigits(s.trainableParams) + "\n";
    out += "Non-trainable params: " + groupDigits(s.frozenParams) + "\n";
    out += "MACs (batch " + std::to_string(s.batch) + "): " + groupDigits(s.macs) + "\n";
    out += "Activation memory (batch " + std::to_string(s.batch) + ", forward): " + humanBytes(s.activationBytes) + "\n";
    return out;
}

nlohmann::json summaryJson(const ModelSummary& s) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& r : s.rows) {
        nlohmann::json j = {{"name", r.name},
                            {"op", r.op},
                            {"output_shape", r.output.dims()},
                            {"inputs", r.inputs},
                            {"trainable_params", r.trainableParams},
                            {"frozen_params", r.frozenParams},
                            {"macs", r.macs},
                            {"activation_bytes", r.activationBytes}};
        if (!r.sharedWith.empty()) j["shared_with"] = r.sharedWith;
        rows.push_back(std::move(j));
    }
    return {{"batch_size", s.batch},
            {"nodes", rows},
            {"trainable_params", s.trainableParams},
            {"frozen_params", s.frozenParams},
            {"total_params", s.trainableParams + s.frozenParams},
            {"macs", s.macs},
            {"activation_bytes", s.activationBytes},
            {"parameter_bytes", s.parameterBytes}};
}

}  // namespace kiln::engine::ops
