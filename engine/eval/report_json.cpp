// SPDX-License-Identifier: Apache-2.0
// JSON and CSV forms of evaluation reports.
#include "engine/eval/report_json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace kiln::engine::eval {

using nlohmann::json;

namespace {

json number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json numbers(const std::vector<double>& values) {
    json out = json::array();
    for (double v : values) out.push_back(number(v));
    return out;
}

json averages(const Averages& a) {
    return {{"precision", a.precision}, {"recall", a.recall}, {"f1", a.f1}, {"support", a.support}};
}

std::string csvField(const std::string& s) {
    if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) {
        if (c == '"') out += '"';
        out += c;
    }
    return out + "\"";
}

std::string formatDouble(double v) {
    if (!std::isfinite(v)) return {};
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.17g", v);
    return buffer;
}

json featureNames(const SampleFeatures& features) { return features.names; }

json featureValues(const SampleFeatures& features, int64_t index) {
    json out = json::array();
    for (size_t f = 0; f < features.count(); ++f) {
        const float v = features.value(index, f);
        if (std::isnan(v)) out.push_back(nullptr);
        else if (f < features.categories.size() && !features.categories[f].empty()) out.push_back(features.text(index, f));
        else {
            // The float's shortest decimal form read back as a double, so that 17.99 prints as
            // 17.99, not as the float's exact binary value (17.989999771118164).
            const std::string text = features.text(index, f);
            double d = v;
            std::from_chars(text.data(), text.data() + text.size(), d);
            out.push_back(number(d));
        }
    }
    return out;
}

}  // namespace

json recordJson(const SampleRecord& r, const std::vector<std::string>& classNames, const SampleFeatures* features) {
    json out = {{"index", r.index}, {"source", r.source}, {"loss", number(r.loss)}};
    if (r.trueClass >= 0) {
        auto name = [&](int64_t c) {
            return c >= 0 && static_cast<size_t>(c) < classNames.size() ? classNames[static_cast<size_t>(c)]
                                                                        : std::to_string(c);
        };
        out["true"] = name(r.trueClass);
        out["predicted"] = name(r.predicted);
        out["confidence"] = number(r.confidence);
        out["correct"] = r.correct();
    }
    if (features != nullptr && features->count() > 0) out["features"] = featureValues(*features, r.index);
    return out;
}

json reportJson(const ClassificationReport& r, size_t records, const SampleFeatures* features) {
    json out;
    out["task"] = "classification";
    out["samples"] = r.samples;
    out["classes"] = r.classNames;
    out["accuracy"] = r.accuracy;
    json matrix = json::array();
    for (int64_t t = 0; t < r.numClasses; ++t) {
        json row = json::array();
        for (int64_t p = 0; p < r.numClasses; ++p) row.push_back(r.count(t, p));
        matrix.push_back(row);
    }
    out["confusion_matrix"] = matrix;
    json perClass = json::array();
    for (const auto& f : r.perClass)
        perClass.push_back({{"class", f.name}, {"precision", f.precision}, {"recall", f.recall}, {"f1", f.f1},
                            {"support", f.support}});
    out["per_class"] = perClass;
    out["macro_avg"] = averages(r.macro);
    out["weighted_avg"] = averages(r.weighted);
    json roc = json::array(), pr = json::array();
    for (size_t c = 0; c < r.roc.size(); ++c) {
        roc.push_back({{"class", r.classNames[c]}, {"fpr", numbers(r.roc[c].fpr)}, {"tpr", numbers(r.roc[c].tpr)},
                       {"thresholds", numbers(r.roc[c].thresholds)}, {"auc", number(r.roc[c].auc)}});
        pr.push_back({{"class", r.classNames[c]}, {"precision", numbers(r.pr[c].precision)},
                      {"recall", numbers(r.pr[c].recall)}, {"thresholds", numbers(r.pr[c].thresholds)},
                      {"average_precision", number(r.pr[c].averagePrecision)},
                      {"has_positives", r.pr[c].defined}});
    }
    out["roc"] = roc;
    out["macro_auc"] = number(r.macroAuc);
    out["pr"] = pr;
    json bins = json::array();
    for (const auto& b : r.calibration)
        bins.push_back({{"lower", b.lower}, {"upper", b.upper}, {"count", b.count},
                        {"mean_confidence", b.meanConfidence}, {"accuracy", b.accuracy}});
    out["calibration"] = {{"bins", bins}, {"ece", r.expectedCalibrationError}};
    out["log_loss"] = number(r.logLoss);
    json worst = json::array();
    for (size_t i = 0; i < std::min(records, r.records.size()); ++i) worst.push_back(recordJson(r.records[i], r.classNames, features));
    out["samples_most_confidently_wrong"] = worst;
    if (features != nullptr && features->count() > 0) out["feature_names"] = featureNames(*features);
    return out;
}

json reportJson(const RegressionReport& r, size_t records, const SampleFeatures* features) {
    json out;
    out["task"] = "regression";
    out["samples"] = r.samples;
    out["outputs"] = r.width;
    out["mae"] = r.mae;
    out["mse"] = r.mse;
    out["rmse"] = r.rmse;
    out["r2"] = r.r2;
    json residuals = json::array();
    const size_t w = static_cast<size_t>(std::max<int64_t>(r.width, 1));
    for (size_t i = 0; i < r.residuals.size(); i += w)
        residuals.push_back(w == 1 ? number(r.residuals[i])
                                   : numbers(std::vector<double>(r.residuals.begin() + static_cast<std::ptrdiff_t>(i),
                                                                 r.residuals.begin() + static_cast<std::ptrdiff_t>(i + w))));
    out["residuals"] = residuals;
    json worst = json::array();
    for (size_t i = 0; i < std::min(records, r.records.size()); ++i) worst.push_back(recordJson(r.records[i], {}, features));
    out["largest_errors"] = worst;
    if (features != nullptr && features->count() > 0) out["feature_names"] = featureNames(*features);
    return out;
}

std::string recordsCsv(const std::vector<SampleRecord>& records, const std::vector<std::string>& classNames,
                       const SampleFeatures* features) {
    const size_t featureCount = features != nullptr ? features->count() : 0;
    std::string out = "index,source,true,predicted,confidence,loss,correct";
    for (size_t f = 0; f < featureCount; ++f) out += "," + csvField(features->names[f]);
    out += "\n";
    auto name = [&](int64_t c) {
        if (c < 0) return std::string();
        return static_cast<size_t>(c) < classNames.size() ? classNames[static_cast<size_t>(c)] : std::to_string(c);
    };
    for (const auto& r : records) {
        const bool classified = r.trueClass >= 0;
        out += std::to_string(r.index) + "," + csvField(r.source) + "," + csvField(name(r.trueClass)) + "," +
               csvField(name(r.predicted)) + "," + (classified ? formatDouble(r.confidence) : std::string()) + "," +
               formatDouble(r.loss) + "," + (classified ? (r.correct() ? "1" : "0") : "");
        for (size_t f = 0; f < featureCount; ++f) out += "," + csvField(features->text(r.index, f));
        out += "\n";
    }
    return out;
}

}  // namespace kiln::engine::eval
