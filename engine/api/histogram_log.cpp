// SPDX-License-Identifier: Apache-2.0
// histograms.jsonl: writing one line per epoch and reading a run's lines back.
#include "engine/api/histogram_log.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace kiln::engine::api {

namespace {

using nlohmann::json;

json toJson(const Histogram& h) {
    return json{{"min", h.min},   {"max", h.max},          {"num", h.num},        {"sum", h.sum},
                {"sum_squares", h.sumSquares}, {"limits", h.bucketLimit}, {"counts", h.bucket}};
}

Histogram fromJson(const json& j) {
    Histogram h;
    h.min = j.at("min").get<double>();
    h.max = j.at("max").get<double>();
    h.num = j.at("num").get<double>();
    h.sum = j.at("sum").get<double>();
    h.sumSquares = j.at("sum_squares").get<double>();
    h.bucketLimit = j.at("limits").get<std::vector<double>>();
    h.bucket = j.at("counts").get<std::vector<double>>();
    if (h.bucketLimit.size() != h.bucket.size()) throw std::runtime_error("\"limits\" and \"counts\" differ in length");
    return h;
}

}  // namespace

std::string histogramLogPath(const std::string& runDir) {
    return (std::filesystem::path(runDir) / "histograms.jsonl").string();
}

std::string histogramLine(int epoch, const std::vector<ParamHistogram>& params) {
    json list = json::array();
    for (const auto& p : params) {
        json item{{"name", p.name}, {"weights", toJson(p.weights)}};
        if (p.gradients.num > 0) item["gradients"] = toJson(p.gradients);
        list.push_back(std::move(item));
    }
    return json{{"epoch", epoch}, {"params", std::move(list)}}.dump();
}

Status appendHistograms(const std::string& path, int epoch, const std::vector<ParamHistogram>& params) {
    std::ofstream out(path, std::ios::app | std::ios::binary);
    if (out) out << histogramLine(epoch, params) << '\n';
    out.flush();
    if (!out)
        return Error(ErrorCode::FileWrite, "could not write the histograms of epoch " + std::to_string(epoch))
            .withFile(path)
            .with("path", path)
            .with("reason", "the file could not be appended to");
    return {};
}

Result<std::vector<EpochHistograms>> readHistograms(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        std::error_code ec;
        if (!std::filesystem::exists(path, ec))
            return Error(ErrorCode::FileNotFound, "no histograms were recorded for this run").withFile(path).with("path", path);
        return Error(ErrorCode::FileRead, "could not open the histograms").withFile(path).with("path", path).with("reason", "unreadable");
    }
    std::stringstream all;
    all << in.rdbuf();
    const std::string text = all.str();
    std::map<int, EpochHistograms> byEpoch;
    size_t start = 0;
    int lineNo = 0;
    while (start < text.size()) {
        const size_t end = text.find('\n', start);
        ++lineNo;
        if (end == std::string::npos) break;  // torn last line: the write did not finish
        const std::string line = text.substr(start, end - start);
        start = end + 1;
        if (line.empty()) continue;
        try {
            const json j = json::parse(line);
            EpochHistograms e;
            e.epoch = j.at("epoch").get<int>();
            for (const auto& item : j.at("params")) {
                ParamHistogram p;
                p.name = item.at("name").get<std::string>();
                p.weights = fromJson(item.at("weights"));
                if (item.contains("gradients")) p.gradients = fromJson(item.at("gradients"));
                e.params.push_back(std::move(p));
            }
            byEpoch[e.epoch] = std::move(e);
        } catch (const std::exception& ex) {
            return Error(ErrorCode::ParseError, "a line of the histograms is not valid: " + std::string(ex.what()))
                .withFile(path, lineNo)
                .with("file", path)
                .with("line", std::to_string(lineNo))
                .with("reason", ex.what());
        }
    }
    std::vector<EpochHistograms> out;
    for (auto& [epoch, e] : byEpoch) out.push_back(std::move(e));
    return out;
}

}  // namespace kiln::engine::api
