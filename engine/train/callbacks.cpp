// SPDX-License-Identifier: Apache-2.0
// The Keras callbacks: decisions follow keras/src/callbacks semantics (patience counted in
// epochs, min_delta against the best value so far, cooldown after a reduction, baseline).
#include "engine/train/callbacks.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>

#include "engine/io/safetensors.h"
#include "engine/io/tfevents.h"
#include "engine/train/weights.h"

namespace kiln::engine::train {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

Error fieldError(const std::string& field, const std::string& why) {
    return Error(ErrorCode::ConfigError, field + " " + why).with("field", field).with("reason", why);
}

std::string resolve(const CallbackContext& ctx, const std::string& p) {
    if (p.empty() || fs::path(p).is_absolute() || ctx.runDir.empty()) return p;
    return (fs::path(ctx.runDir) / p).string();
}

// Keras' rule for ReduceLROnPlateau and ModelCheckpoint: "acc" in the name means higher is better.
bool maximizeByAcc(const std::string& monitor, MonitorMode mode) {
    if (mode == MonitorMode::Max) return true;
    if (mode == MonitorMode::Min) return false;
    return monitor.find("acc") != std::string::npos || monitor.starts_with("fmeasure");
}

// EarlyStopping infers the direction from the metric itself (as Keras 3 does).
Result<bool> maximizeByMetric(const std::string& monitor, MonitorMode mode, const std::string& field) {
    if (mode == MonitorMode::Max) return true;
    if (mode == MonitorMode::Min) return false;
    std::string m = monitor.starts_with("val_") ? monitor.substr(4) : monitor;
    for (const char* up : {"acc", "auc", "precision", "recall"})
        if (m.find(up) != std::string::npos) return true;
    for (const char* down : {"loss", "mse", "mae", "error", "crossentropy", "hinge"})
        if (m.find(down) != std::string::npos) return false;
    return fieldError(field + ".mode", "is \"auto\" but the direction of \"" + monitor +
                                           "\" is not known; set \"min\" or \"max\"");
}

// Shortest round-trip text in Python's repr() style, as Keras' CSV files have it: fixed notation
// for exponents in [-4, 16), else scientific with a two-digit exponent; "1.0", never "1".
std::string formatDouble(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
    std::string sci(buf, r.ptr);
    const size_t e = sci.find('e');
    std::string mant = sci.substr(0, e);
    const int exp = std::stoi(sci.substr(e + 1));
    std::string sign;
    if (mant[0] == '-') {
        sign = "-";
        mant.erase(0, 1);
    }
    std::string digits;
    for (char ch : mant)
        if (ch != '.') digits += ch;
    if (exp >= -4 && exp < 16) {
        std::string out;
        if (exp < 0) {
            out = "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
        } else if (static_cast<size_t>(exp) + 1 >= digits.size()) {
            out = digits + std::string(static_cast<size_t>(exp) + 1 - digits.size(), '0') + ".0";
        } else {
            out = digits.substr(0, static_cast<size_t>(exp) + 1) + "." + digits.substr(static_cast<size_t>(exp) + 1);
        }
        return sign + out;
    }
    std::string m = digits.substr(0, 1) + (digits.size() > 1 ? "." + digits.substr(1) : std::string());
    char ebuf[16];
    std::snprintf(ebuf, sizeof ebuf, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
    return sign + m + ebuf;
}

std::vector<std::vector<float>> copyWeights(const exec::ParamStore& p) {
    std::vector<std::vector<float>> out;
    for (const auto& prm : p.params()) {
        const float* v = prm.value.data<float>();
        out.emplace_back(v, v + prm.value.numel());
    }
    return out;
}

void setWeights(exec::ParamStore& p, const std::vector<std::vector<float>>& w) {
    auto& ps = p.params();
    for (size_t i = 0; i < ps.size() && i < w.size(); ++i) std::copy(w[i].begin(), w[i].end(), ps[i].value.data<float>());
}

// Reads the options of one callback, remembering which keys were used.
class Options {
public:
    Options(const json& j, std::string field) : m_j(j), m_field(std::move(field)) {}
    std::string name(const std::string& k) const { return m_field + "." + k; }
    bool has(const std::string& k) {
        m_known.insert(k);
        return m_j.contains(k) && !m_j.at(k).is_null();
    }
    Status number(const std::string& k, double& out) {
        if (!has(k)) return {};
        if (!m_j.at(k).is_number()) return fieldError(name(k), "must be a number");
        out = m_j.at(k).get<double>();
        return {};
    }
    Status integer(const std::string& k, int& out, int minimum = 0) {
        if (!has(k)) return {};
        if (!m_j.at(k).is_number_integer()) return fieldError(name(k), "must be an integer");
        auto v = m_j.at(k).get<int64_t>();
        if (v < minimum || v > std::numeric_limits<int>::max())
            return fieldError(name(k), "must be at least " + std::to_string(minimum));
        out = static_cast<int>(v);
        return {};
    }
    Status boolean(const std::string& k, bool& out) {
        if (!has(k)) return {};
        if (!m_j.at(k).is_boolean()) return fieldError(name(k), "must be true or false");
        out = m_j.at(k).get<bool>();
        return {};
    }
    Status string(const std::string& k, std::string& out, bool allowEmpty = false) {
        if (!has(k)) return {};
        if (!m_j.at(k).is_string()) return fieldError(name(k), "must be a string");
        out = m_j.at(k).get<std::string>();
        if (out.empty() && !allowEmpty) return fieldError(name(k), "must not be empty");
        return {};
    }
    Status mode(MonitorMode& out) {
        std::string m;
        KILN_TRY(string("mode", m));
        if (m.empty() || m == "auto") out = MonitorMode::Auto;
        else if (m == "min") out = MonitorMode::Min;
        else if (m == "max") out = MonitorMode::Max;
        else return fieldError(name("mode"), "must be \"auto\", \"min\" or \"max\" (got \"" + m + "\")");
        return {};
    }
    // "epoch" → 0, or a positive number of steps.
    Status frequency(const std::string& k, int64_t& out) {
        if (!has(k)) return {};
        const json& v = m_j.at(k);
        if (v.is_string() && v.get<std::string>() == "epoch") {
            out = 0;
        } else if (v.is_number_integer() && v.get<int64_t>() > 0) {
            out = v.get<int64_t>();
        } else {
            return fieldError(name(k), "must be \"epoch\" or a positive number of steps");
        }
        return {};
    }
    Status finish() const {
        for (auto& [k, v] : m_j.items())
            if (!m_known.count(k)) return fieldError(name(k), "is not a known setting");
        return {};
    }

private:
    const json& m_j;
    std::string m_field;
    std::set<std::string> m_known{"type"};
};

}  // namespace

Callback::~Callback() = default;

// ---------------------------------------------------------------------------------------------
// ReduceLROnPlateau

ReduceLROnPlateau::ReduceLROnPlateau(ReduceLROnPlateauOptions o) : m_o(std::move(o)) {
    m_max = maximizeByAcc(m_o.monitor, m_o.mode);
}

bool ReduceLROnPlateau::better(double a, double b) const {
    return m_max ? a > b + m_o.minDelta : a < b - m_o.minDelta;
}

Status ReduceLROnPlateau::onTrainBegin(TrainControl&) {
    m_best = m_max ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    m_wait = 0;
    m_cooldownCounter = 0;
    return {};
}

Status ReduceLROnPlateau::onEpochEnd(TrainControl& c, int, const Logs& logs) {
    auto it = logs.find(m_o.monitor);
    if (it == logs.end()) return {};  // as Keras: a warning, no action
    const double current = it->second;
    const bool inCooldown = m_cooldownCounter > 0;
    if (inCooldown) {
        --m_cooldownCounter;
        m_wait = 0;
    }
    if (better(current, m_best)) {
        m_best = current;
        m_wait = 0;
    } else if (!inCooldown) {
        ++m_wait;
        if (m_wait >= m_o.patience) {
            const double old = c.learningRate();
            if (old > m_o.minLr) {
                c.setLearningRate(std::max(old * m_o.factor, m_o.minLr));
                m_cooldownCounter = m_o.cooldown;
                m_wait = 0;
            }
        }
    }
    return {};
}

Result<json> ReduceLROnPlateau::saveState(const std::string&) const {
    return json{{"best", m_best}, {"wait", m_wait}, {"cooldown_counter", m_cooldownCounter}};
}

Status ReduceLROnPlateau::loadState(const json& s, const std::string&) {
    // JSON has no infinity: an untouched best is stored as null.
    m_best = s.at("best").is_null() ? (m_max ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity())
                                    : s.at("best").get<double>();
    m_wait = s.at("wait").get<int>();
    m_cooldownCounter = s.at("cooldown_counter").get<int>();
    return {};
}

// ---------------------------------------------------------------------------------------------
// EarlyStopping

EarlyStopping::EarlyStopping(EarlyStoppingOptions o) : m_o(std::move(o)) {
    m_o.minDelta = std::abs(m_o.minDelta);
    auto m = maximizeByMetric(m_o.monitor, m_o.mode, "EarlyStopping");
    m_max = m.ok() && *m;
}

bool EarlyStopping::improvement(double current, std::optional<double> reference) const {
    if (!reference) return true;
    // Keras: monitor_op(current - min_delta, reference), min_delta negated for "min".
    return m_max ? current - m_o.minDelta > *reference : current + m_o.minDelta < *reference;
}

Status EarlyStopping::onTrainBegin(TrainControl&) {
    m_wait = 0;
    m_stoppedEpoch = 0;
    m_bestEpoch = 0;
    m_best.reset();
    m_bestWeights.clear();
    return {};
}

Status EarlyStopping::onEpochEnd(TrainControl& c, int epoch, const Logs& logs) {
    const int e0 = epoch - 1;  // Keras counts epochs from 0
    auto it = logs.find(m_o.monitor);
    if (it == logs.end() || e0 < m_o.startFromEpoch) return {};
    const double current = it->second;
    if (m_o.restoreBestWeights && m_bestWeights.empty() && c.parameters()) {
        m_bestWeights = copyWeights(*c.parameters());
        m_bestEpoch = epoch;
    }
    ++m_wait;
    if (improvement(current, m_best)) {
        m_best = current;
        m_bestEpoch = epoch;
        if (m_o.restoreBestWeights && c.parameters()) m_bestWeights = copyWeights(*c.parameters());
        if (!m_o.baseline || improvement(current, m_o.baseline)) m_wait = 0;
        return {};
    }
    if (m_wait >= m_o.patience && e0 > 0) {
        m_stoppedEpoch = epoch;
        c.requestStop("EarlyStopping: " + m_o.monitor + " did not improve for " + std::to_string(m_wait) + " epoch(s)");
    }
    return {};
}

Status EarlyStopping::onTrainEnd(TrainControl& c, TrainEndReason reason) {
    // A user stop keeps the current weights so a resumed run continues from them.
    if (reason == TrainEndReason::UserStopped || reason == TrainEndReason::Failed) return {};
    if (m_o.restoreBestWeights && !m_bestWeights.empty() && c.parameters()) setWeights(*c.parameters(), m_bestWeights);
    return {};
}

Result<json> EarlyStopping::saveState(const std::string& dir) const {
    json s = {{"wait", m_wait}, {"stopped_epoch", m_stoppedEpoch}, {"best_epoch", m_bestEpoch},
              {"best", m_best ? json(*m_best) : json()}, {"has_best_weights", !m_bestWeights.empty()}};
    if (!m_bestWeights.empty()) {
        std::vector<io::NamedTensor> tensors;
        for (size_t i = 0; i < m_bestWeights.size(); ++i) {
            tensors.push_back({std::to_string(i), Tensor::fromVector(Shape{static_cast<int64_t>(m_bestWeights[i].size())}, m_bestWeights[i])});
        }
        KILN_TRY(io::saveSafetensors(dir + "/early_stopping_best.safetensors", tensors));
    }
    return s;
}

Status EarlyStopping::loadState(const json& s, const std::string& dir) {
    m_wait = s.at("wait").get<int>();
    m_stoppedEpoch = s.at("stopped_epoch").get<int>();
    m_bestEpoch = s.at("best_epoch").get<int>();
    if (s.at("best").is_null()) m_best.reset();
    else m_best = s.at("best").get<double>();
    m_bestWeights.clear();
    if (s.at("has_best_weights").get<bool>()) {
        KILN_ASSIGN(auto f, io::loadSafetensors(dir + "/early_stopping_best.safetensors"));
        m_bestWeights.resize(f.tensors.size());
        for (const auto& t : f.tensors) {
            size_t i = std::stoul(t.name);
            if (i >= m_bestWeights.size()) return Error(ErrorCode::DataError, "bad EarlyStopping state in " + dir).withFile(dir);
            const float* v = t.tensor.data<float>();
            m_bestWeights[i].assign(v, v + t.tensor.numel());
        }
    }
    return {};
}

// ---------------------------------------------------------------------------------------------
// ModelCheckpoint

ModelCheckpoint::ModelCheckpoint(ModelCheckpointOptions o, CallbackContext ctx) : m_o(std::move(o)), m_ctx(std::move(ctx)) {
    m_max = maximizeByAcc(m_o.monitor, m_o.mode);
}

Status ModelCheckpoint::onTrainBegin(TrainControl&) {
    m_best = m_o.initialValueThreshold;
    m_saved.clear();
    m_epoch = 0;
    return {};
}

Result<std::string> ModelCheckpoint::pathFor(int epoch, const Logs& logs) const {
    const std::string& f = m_o.filepath;
    std::string out;
    for (size_t i = 0; i < f.size(); ++i) {
        if (f[i] != '{') {
            out += f[i];
            continue;
        }
        size_t close = f.find('}', i);
        if (close == std::string::npos) return fieldError("ModelCheckpoint.filepath", "has an unclosed \"{\"");
        std::string field = f.substr(i + 1, close - i - 1);
        std::string key = field, spec;
        if (auto colon = field.find(':'); colon != std::string::npos) {
            key = field.substr(0, colon);
            spec = field.substr(colon + 1);
        }
        char buf[128];
        if (key == "epoch") {
            // Keras fills {epoch} 1-based.
            std::string fmt = "%" + (spec.empty() ? std::string("d") : spec);
            if (fmt.back() != 'd') return fieldError("ModelCheckpoint.filepath", "formats {epoch} with \"" + spec + "\"; use e.g. 03d");
            std::snprintf(buf, sizeof buf, fmt.c_str(), epoch);
        } else {
            auto it = logs.find(key);
            if (it == logs.end())
                return fieldError("ModelCheckpoint.filepath", "uses {" + key + "}, which is not in the logs");
            std::string fmt = "%" + (spec.empty() ? std::string("g") : spec);
            char last = fmt.back();
            if (last != 'f' && last != 'g' && last != 'e')
                return fieldError("ModelCheckpoint.filepath", "formats {" + key + "} with \"" + spec + "\"; use e.g. .4f");
            std::snprintf(buf, sizeof buf, fmt.c_str(), it->second);
        }
        out += buf;
        i = close;
    }
    return resolve(m_ctx, out);
}

Status ModelCheckpoint::save(TrainControl& c, int epoch, const Logs& logs) {
    if (!c.parameters()) return {};
    if (m_o.saveBestOnly) {
        auto it = logs.find(m_o.monitor);
        if (it == logs.end()) return {};  // Keras warns and skips
        const double current = it->second;
        const bool better = !m_best || (m_max ? current > *m_best : current < *m_best);
        if (!better) return {};
        m_best = current;
    }
    KILN_ASSIGN(std::string path, pathFor(epoch, logs));
    std::error_code ec;
    if (auto parent = fs::path(path).parent_path(); !parent.empty()) fs::create_directories(parent, ec);
    std::map<std::string, std::string> meta{{"epoch", std::to_string(epoch)}, {"step", std::to_string(c.globalStep())}};
    if (auto it = logs.find(m_o.monitor); it != logs.end()) meta[m_o.monitor] = formatDouble(it->second);
    KILN_TRY(saveWeights(*c.parameters(), path, meta));
    if (m_saved.empty() || m_saved.back() != path) m_saved.push_back(path);
    c.noteCheckpoint(path);
    return {};
}

Status ModelCheckpoint::onBatchEnd(TrainControl& c, const BatchLogs& b) {
    m_epoch = b.epoch;
    if (m_o.saveFreqSteps > 0 && b.globalStep % m_o.saveFreqSteps == 0) return save(c, b.epoch, b.logs);
    return {};
}

Status ModelCheckpoint::onEpochEnd(TrainControl& c, int epoch, const Logs& logs) {
    if (m_o.saveFreqSteps == 0 && epoch % std::max(1, m_o.period) == 0) return save(c, epoch, logs);
    return {};
}

Result<json> ModelCheckpoint::saveState(const std::string&) const {
    return json{{"best", m_best ? json(*m_best) : json()}, {"saved", m_saved}};
}

Status ModelCheckpoint::loadState(const json& s, const std::string&) {
    if (s.at("best").is_null()) m_best.reset();
    else m_best = s.at("best").get<double>();
    m_saved = s.at("saved").get<std::vector<std::string>>();
    return {};
}

// ---------------------------------------------------------------------------------------------
// BackupAndRestore

BackupAndRestore::BackupAndRestore(BackupAndRestoreOptions o, CallbackContext ctx) : m_o(std::move(o)), m_ctx(std::move(ctx)) {}

std::string BackupAndRestore::dir() const { return resolve(m_ctx, m_o.backupDir); }

Status BackupAndRestore::onTrainBegin(TrainControl& c) {
    // As Keras: a backup left by an interrupted run is picked up automatically.
    const std::string d = dir();
    if (fs::exists(d + "/state.json") || fs::exists(d + ".old/state.json")) c.requestRestore(d);
    return {};
}

Status BackupAndRestore::onBatchEnd(TrainControl& c, const BatchLogs& b) {
    if (m_o.saveFreqSteps > 0 && b.globalStep % m_o.saveFreqSteps == 0) {
        c.requestStateSave(dir());
        c.noteCheckpoint(dir());
    }
    return {};
}

Status BackupAndRestore::onEpochEnd(TrainControl& c, int, const Logs&) {
    if (m_o.saveFreqSteps == 0) {
        c.requestStateSave(dir());
        c.noteCheckpoint(dir());
    }
    return {};
}

Status BackupAndRestore::onTrainEnd(TrainControl&, TrainEndReason reason) {
    if (m_ctx.readOnly || !m_o.deleteCheckpoint || (reason != TrainEndReason::Completed && reason != TrainEndReason::EarlyStopped)) return {};
    std::error_code ec;
    fs::remove_all(dir(), ec);
    fs::remove_all(dir() + ".old", ec);
    return {};
}

// ---------------------------------------------------------------------------------------------
// CSVLogger

CsvLogger::CsvLogger(CsvLoggerOptions o, CallbackContext ctx) : m_o(std::move(o)), m_ctx(std::move(ctx)) {}

std::string CsvLogger::path() const { return resolve(m_ctx, m_o.filename); }

Status CsvLogger::onTrainBegin(TrainControl&) {
    m_keys.clear();
    const std::string p = path();
    std::error_code ec;
    if (auto parent = fs::path(p).parent_path(); !parent.empty()) fs::create_directories(parent, ec);
    if (m_o.append && fs::exists(p)) {
        m_bytes = static_cast<int64_t>(fs::file_size(p, ec));
        // Keep the existing header's columns.
        std::ifstream in(p);
        std::string header;
        if (std::getline(in, header) && !header.empty()) {
            size_t pos = 0;
            bool first = true;
            while (pos <= header.size()) {
                size_t next = header.find(m_o.separator, pos);
                std::string col = header.substr(pos, next == std::string::npos ? std::string::npos : next - pos);
                if (!first) m_keys.push_back(col);
                first = false;
                if (next == std::string::npos) break;
                pos = next + m_o.separator.size();
            }
        }
        return {};
    }
    std::ofstream out(p, std::ios::trunc);
    if (!out)
        return Error(ErrorCode::FileWrite, "cannot write " + p).withFile(p).with("path", p).with("reason", "cannot create");
    m_bytes = 0;
    return {};
}

Status CsvLogger::onEpochEnd(TrainControl&, int epoch, const Logs& logs) {
    const std::string p = path();
    std::string text;
    if (m_keys.empty()) {
        for (const auto& [k, v] : logs) m_keys.push_back(k);
        text += "epoch";
        for (const auto& k : m_keys) text += m_o.separator + k;
        text += "\n";
    }
    text += std::to_string(epoch - 1);
    for (const auto& k : m_keys) {
        auto it = logs.find(k);
        text += m_o.separator + (it == logs.end() ? std::string("NA") : formatDouble(it->second));
    }
    text += "\n";
    std::ofstream out(p, std::ios::app | std::ios::binary);
    out << text;
    out.flush();
    if (!out) return Error(ErrorCode::FileWrite, "cannot write " + p).withFile(p).with("path", p).with("reason", "write failed");
    m_bytes += static_cast<int64_t>(text.size());
    return {};
}

Result<json> CsvLogger::saveState(const std::string&) const { return json{{"bytes", m_bytes}, {"keys", m_keys}}; }

Status CsvLogger::loadState(const json& s, const std::string&) {
    // Rows written after the backup are dropped; the resumed run writes them again.
    m_bytes = s.at("bytes").get<int64_t>();
    m_keys = s.at("keys").get<std::vector<std::string>>();
    const std::string p = path();
    std::error_code ec;
    if (fs::exists(p) && static_cast<int64_t>(fs::file_size(p, ec)) > m_bytes) fs::resize_file(p, static_cast<uintmax_t>(m_bytes), ec);
    if (ec) return Error(ErrorCode::FileWrite, "cannot truncate " + p).withFile(p).with("path", p).with("reason", ec.message());
    return {};
}

// ---------------------------------------------------------------------------------------------
// TerminateOnNaN

Status TerminateOnNaN::onBatchEnd(TrainControl& c, const BatchLogs& b) {
    if (std::isfinite(b.batchLoss)) return {};
    std::string last = c.lastCheckpoint();
    std::string what = std::isnan(b.batchLoss) ? "NaN" : "infinite";
    std::string msg = "training stopped: the loss became " + what + " at step " + std::to_string(b.globalStep) + " (epoch " +
                      std::to_string(b.epoch) + ", step " + std::to_string(b.step) + "); " +
                      (last.empty() ? std::string("no checkpoint was saved before it") : "the last good checkpoint is " + last);
    c.requestStop(msg);
    return Error(ErrorCode::DataError, msg)
        .with("reason", "non-finite loss")
        .with("step", std::to_string(b.globalStep))
        .with("checkpoint", last);
}

// ---------------------------------------------------------------------------------------------
// TensorBoard

TensorBoard::TensorBoard(TensorBoardOptions o, CallbackContext ctx) : m_o(std::move(o)), m_ctx(std::move(ctx)) {}
TensorBoard::~TensorBoard() = default;

std::string TensorBoard::logDir() const { return resolve(m_ctx, m_o.logDir); }

Status TensorBoard::onTrainBegin(TrainControl&) {
    // As Keras: one run for training values and one for validation values.
    KILN_ASSIGN(m_train, io::EventFileWriter::create(logDir() + "/train"));
    KILN_ASSIGN(m_validation, io::EventFileWriter::create(logDir() + "/validation"));
    return {};
}

Status TensorBoard::onBatchEnd(TrainControl&, const BatchLogs& b) {
    if (!m_train || m_o.updateFreqSteps <= 0 || b.globalStep % m_o.updateFreqSteps != 0) return {};
    for (const auto& [k, v] : b.logs) KILN_TRY(m_train->scalar("batch_" + k, b.globalStep, v));
    return {};
}

Status TensorBoard::onEpochEnd(TrainControl& c, int epoch, const Logs& logs) {
    if (!m_train) return {};
    const int64_t step = epoch - 1;  // Keras logs epoch values at the 0-based epoch
    for (const auto& [k, v] : logs) {
        if (k.starts_with("val_")) KILN_TRY(m_validation->scalar("epoch_" + k.substr(4), step, v));
        else KILN_TRY(m_train->scalar("epoch_" + k, step, v));
    }
    if (m_o.histogramFreq > 0 && epoch % m_o.histogramFreq == 0) {
        // gradients() brings the weights too; parameters() alone where gradients cannot be read.
        exec::ParamStore* grads = c.gradients();
        exec::ParamStore* params = grads ? grads : c.parameters();
        if (params) {
            for (const auto& p : params->params()) {
                const auto n = static_cast<size_t>(p.value.numel());
                KILN_TRY(m_train->histogram(p.name + "/histogram", step, std::span<const float>(p.value.data<float>(), n)));
                if (grads && p.trainable)
                    KILN_TRY(m_train->histogram(p.name + "/gradient", step, std::span<const float>(p.grad.data<float>(), n)));
            }
        }
    }
    KILN_TRY(m_train->flush());
    return m_validation->flush();
}

Status TensorBoard::onTrainEnd(TrainControl&, TrainEndReason) {
    Status a = m_train ? m_train->close() : Status{};
    Status b = m_validation ? m_validation->close() : Status{};
    m_train.reset();
    m_validation.reset();
    return a.ok() ? b : a;
}

// ---------------------------------------------------------------------------------------------
// Parsing

std::vector<std::string> callbackTypes() {
    return {"ReduceLROnPlateau", "EarlyStopping", "ModelCheckpoint", "BackupAndRestore", "CSVLogger", "TerminateOnNaN",
            "TensorBoard"};
}

Result<std::unique_ptr<Callback>> makeCallback(const json& spec, const std::string& field, const CallbackContext& ctx) {
    if (!spec.is_object()) return fieldError(field, "must be an object with a \"type\"");
    if (!spec.contains("type") || !spec.at("type").is_string()) return fieldError(field + ".type", "is missing (e.g. \"EarlyStopping\")");
    const std::string type = spec.at("type").get<std::string>();
    Options o(spec, field);
    std::unique_ptr<Callback> cb;
    if (type == "ReduceLROnPlateau") {
        ReduceLROnPlateauOptions r;
        KILN_TRY(o.string("monitor", r.monitor));
        KILN_TRY(o.number("factor", r.factor));
        KILN_TRY(o.integer("patience", r.patience));
        KILN_TRY(o.mode(r.mode));
        KILN_TRY(o.number("min_delta", r.minDelta));
        KILN_TRY(o.integer("cooldown", r.cooldown));
        KILN_TRY(o.number("min_lr", r.minLr));
        if (!(r.factor < 1.0) || r.factor < 0) return fieldError(o.name("factor"), "must be in [0, 1) (the learning rate is multiplied by it)");
        if (r.minLr < 0) return fieldError(o.name("min_lr"), "must not be negative");
        cb = std::make_unique<ReduceLROnPlateau>(r);
    } else if (type == "EarlyStopping") {
        EarlyStoppingOptions e;
        KILN_TRY(o.string("monitor", e.monitor));
        KILN_TRY(o.number("min_delta", e.minDelta));
        KILN_TRY(o.integer("patience", e.patience));
        KILN_TRY(o.mode(e.mode));
        if (o.has("baseline")) {
            double b = 0;
            KILN_TRY(o.number("baseline", b));
            e.baseline = b;
        }
        KILN_TRY(o.boolean("restore_best_weights", e.restoreBestWeights));
        KILN_TRY(o.integer("start_from_epoch", e.startFromEpoch));
        KILN_TRY(maximizeByMetric(e.monitor, e.mode, field));
        cb = std::make_unique<EarlyStopping>(e);
    } else if (type == "ModelCheckpoint") {
        ModelCheckpointOptions m;
        KILN_TRY(o.string("filepath", m.filepath));
        KILN_TRY(o.string("monitor", m.monitor));
        KILN_TRY(o.mode(m.mode));
        KILN_TRY(o.boolean("save_best_only", m.saveBestOnly));
        KILN_TRY(o.frequency("save_freq", m.saveFreqSteps));
        KILN_TRY(o.integer("period", m.period, 1));
        if (o.has("save_weights_only")) {
            bool w = true;
            KILN_TRY(o.boolean("save_weights_only", w));
            if (!w) return fieldError(o.name("save_weights_only"), "must be true (checkpoints hold weights; use BackupAndRestore for the full state)");
        }
        if (o.has("initial_value_threshold")) {
            double t = 0;
            KILN_TRY(o.number("initial_value_threshold", t));
            m.initialValueThreshold = t;
        }
        if (m.filepath.find("{") != std::string::npos) {
            ModelCheckpoint probe(m, ctx);
            Logs logs{{m.monitor, 0.0}, {"loss", 0.0}};
            auto p = probe.pathFor(1, logs);
            if (!p.ok() && p.error().message.find("not in the logs") == std::string::npos)
                return fieldError(o.name("filepath"), p.error().param("reason"));
        }
        cb = std::make_unique<ModelCheckpoint>(m, ctx);
    } else if (type == "BackupAndRestore") {
        BackupAndRestoreOptions b;
        KILN_TRY(o.string("backup_dir", b.backupDir));
        KILN_TRY(o.frequency("save_freq", b.saveFreqSteps));
        KILN_TRY(o.boolean("delete_checkpoint", b.deleteCheckpoint));
        cb = std::make_unique<BackupAndRestore>(b, ctx);
    } else if (type == "CSVLogger") {
        CsvLoggerOptions c;
        KILN_TRY(o.string("filename", c.filename));
        KILN_TRY(o.string("separator", c.separator));
        KILN_TRY(o.boolean("append", c.append));
        cb = std::make_unique<CsvLogger>(c, ctx);
    } else if (type == "TerminateOnNaN") {
        cb = std::make_unique<TerminateOnNaN>();
    } else if (type == "TensorBoard") {
        TensorBoardOptions t;
        KILN_TRY(o.string("log_dir", t.logDir));
        KILN_TRY(o.frequency("update_freq", t.updateFreqSteps));
        KILN_TRY(o.integer("histogram_freq", t.histogramFreq));
        cb = std::make_unique<TensorBoard>(t, ctx);
    } else {
        std::string known;
        for (const auto& t : callbackTypes()) known += (known.empty() ? "" : ", ") + t;
        return fieldError(field + ".type", "\"" + type + "\" is not a known callback (use one of " + known + ")");
    }
    KILN_TRY(o.finish());
    return cb;
}

}  // namespace kiln::engine::train
