// SPDX-License-Identifier: Apache-2.0
// Training callbacks with Keras semantics: ReduceLROnPlateau, EarlyStopping, ModelCheckpoint,
// BackupAndRestore, CSVLogger, TerminateOnNaN and TensorBoard, configured from the project's
// "training.callbacks" list. Callbacks act on training through the TrainControl interface.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "engine/exec/param_store.h"

namespace kiln::engine::io {
class EventFileWriter;
}

namespace kiln::engine::train {

// Keras "logs": "loss", metric names, "val_loss", "val_<metric>", "learning_rate".
using Logs = std::map<std::string, double>;

// What a callback may do to the training it observes (implemented by the Trainer).
class TrainControl {
public:
    virtual ~TrainControl() = default;
    virtual double learningRate() const = 0;
    // Replaces the schedule's learning rate from the next step on.
    virtual void setLearningRate(double lr) = 0;
    // Ends training after the current step's and epoch's callbacks (Keras stop_training).
    virtual void requestStop(const std::string& reason) = 0;
    // The model's parameters; nullptr when training has no model (scripted tests).
    virtual exec::ParamStore* parameters() = 0;
    // The parameters with the gradients of the last training step in Parameter::grad (trainable
    // parameters only; unscaled); nullptr when training has no model or they cannot be read.
    virtual exec::ParamStore* gradients() { return nullptr; }
    // Saves the full training state to `dir` once the current hook has run in every callback, so
    // the state includes every callback's decision for this step or epoch.
    virtual void requestStateSave(const std::string& dir) = 0;
    // Continues from the full state in `dir` before the first step (after onTrainBegin).
    virtual void requestRestore(const std::string& dir) = 0;
    // Remembers the newest checkpoint file or folder, for error messages.
    virtual void noteCheckpoint(const std::string& path) = 0;
    virtual std::string lastCheckpoint() const = 0;
    virtual int64_t globalStep() const = 0;
};

struct BatchLogs {
    int epoch = 0;             // 1-based
    int64_t step = 0;          // 1-based within the epoch
    int64_t globalStep = 0;    // steps completed so far
    double batchLoss = 0;      // this batch's loss
    Logs logs;                 // running means over the epoch so far, plus learning_rate
};

enum class TrainEndReason { Completed, EarlyStopped, UserStopped, Failed };

class Callback {
public:
    virtual ~Callback();
    virtual std::string type() const = 0;  // the name used in the project file
    virtual Status onTrainBegin(TrainControl&) { return {}; }
    virtual Status onEpochBegin(TrainControl&, int /*epoch*/) { return {}; }
    virtual Status onBatchEnd(TrainControl&, const BatchLogs&) { return {}; }
    // `epoch` is 1-based; logs hold the epoch's training and validation values and learning_rate.
    virtual Status onEpochEnd(TrainControl&, int /*epoch*/, const Logs&) { return {}; }
    virtual Status onTrainEnd(TrainControl&, TrainEndReason) { return {}; }
    // State carried in full-state backups, so that a resumed run decides exactly as an
    // uninterrupted one. Large data (weights) goes to files in `dir`.
    virtual Result<nlohmann::json> saveState(const std::string& /*dir*/) const { return nlohmann::json(); }
    virtual Status loadState(const nlohmann::json& /*state*/, const std::string& /*dir*/) { return {}; }
};

// Where relative paths of callbacks are taken from, and what was logged.
struct CallbackContext {
    std::string runDir;  // the run's folder; relative paths start here
    // A data-parallel replica that is not the one writing the run (MPI ranks other than 0): it
    // keeps the callbacks that steer training, reads backups to resume, and writes no files.
    bool readOnly = false;
};

// min/max/auto as Keras; auto picks "max" for accuracy-like names and "min" for losses and errors.
enum class MonitorMode { Auto, Min, Max };

struct ReduceLROnPlateauOptions {
    std::string monitor = "val_loss";
    double factor = 0.1;
    int patience = 10;
    MonitorMode mode = MonitorMode::Auto;
    double minDelta = 1e-4;
    int cooldown = 0;
    double minLr = 0.0;
};

class ReduceLROnPlateau : public Callback {
public:
    explicit ReduceLROnPlateau(ReduceLROnPlateauOptions o);
    std::string type() const override { return "ReduceLROnPlateau"; }
    Status onTrainBegin(TrainControl&) override;
    Status onEpochEnd(TrainControl& c, int epoch, const Logs& logs) override;
    Result<nlohmann::json> saveState(const std::string& dir) const override;
    Status loadState(const nlohmann::json& s, const std::string& dir) override;
    double best() const { return m_best; }
    int wait() const { return m_wait; }
    int cooldownCounter() const { return m_cooldownCounter; }

private:
    bool better(double a, double b) const;
    ReduceLROnPlateauOptions m_o;
    bool m_max = false;
    double m_best = 0;
    int m_wait = 0;
    int m_cooldownCounter = 0;
};

struct EarlyStoppingOptions {
    std::string monitor = "val_loss";
    double minDelta = 0.0;
    int patience = 0;
    MonitorMode mode = MonitorMode::Auto;
    std::optional<double> baseline;
    bool restoreBestWeights = false;
    int startFromEpoch = 0;  // epochs (0-based, as Keras) before this one are not monitored
};

class EarlyStopping : public Callback {
public:
    explicit EarlyStopping(EarlyStoppingOptions o);
    std::string type() const override { return "EarlyStopping"; }
    Status onTrainBegin(TrainControl&) override;
    Status onEpochEnd(TrainControl& c, int epoch, const Logs& logs) override;
    Status onTrainEnd(TrainControl& c, TrainEndReason reason) override;
    Result<nlohmann::json> saveState(const std::string& dir) const override;
    Status loadState(const nlohmann::json& s, const std::string& dir) override;
    int stoppedEpoch() const { return m_stoppedEpoch; }  // 1-based; 0 when it did not stop training
    int bestEpoch() const { return m_bestEpoch; }        // 1-based; 0 before the first monitored epoch
    std::optional<double> best() const { return m_best; }
    int wait() const { return m_wait; }

private:
    bool improvement(double current, std::optional<double> reference) const;
    EarlyStoppingOptions m_o;
    bool m_max = false;
    int m_wait = 0;
    int m_stoppedEpoch = 0;
    int m_bestEpoch = 0;
    std::optional<double> m_best;
    std::vector<std::vector<float>> m_bestWeights;  // empty until the first monitored epoch
};

struct ModelCheckpointOptions {
    // Relative to the run folder. "{epoch}", "{epoch:03d}", "{val_loss:.4f}" (any log name,
    // printf-style format) are filled in. Weights are written as safetensors, atomically.
    std::string filepath = "checkpoints/weights.{epoch:03d}.safetensors";
    std::string monitor = "val_loss";
    MonitorMode mode = MonitorMode::Auto;
    bool saveBestOnly = false;
    int64_t saveFreqSteps = 0;   // 0: save at epoch ends ("save_freq": "epoch"), else every N steps
    int period = 1;              // with epoch saving: every N epochs
    std::optional<double> initialValueThreshold;
};

class ModelCheckpoint : public Callback {
public:
    ModelCheckpoint(ModelCheckpointOptions o, CallbackContext ctx);
    std::string type() const override { return "ModelCheckpoint"; }
    Status onTrainBegin(TrainControl&) override;
    Status onBatchEnd(TrainControl& c, const BatchLogs& b) override;
    Status onEpochEnd(TrainControl& c, int epoch, const Logs& logs) override;
    Result<nlohmann::json> saveState(const std::string& dir) const override;
    Status loadState(const nlohmann::json& s, const std::string& dir) override;
    const std::vector<std::string>& saved() const { return m_saved; }
    std::optional<double> best() const { return m_best; }
    // The file name for an epoch and its logs (filepath with the fields filled in).
    Result<std::string> pathFor(int epoch, const Logs& logs) const;

private:
    Status save(TrainControl& c, int epoch, const Logs& logs);
    ModelCheckpointOptions m_o;
    CallbackContext m_ctx;
    bool m_max = false;
    std::optional<double> m_best;
    std::vector<std::string> m_saved;
    int m_epoch = 0;
};

struct BackupAndRestoreOptions {
    std::string backupDir = "backup";  // relative to the run folder
    int64_t saveFreqSteps = 0;         // 0: at each epoch end ("save_freq": "epoch"), else every N steps
    bool deleteCheckpoint = true;      // remove the backup when training completes
};

class BackupAndRestore : public Callback {
public:
    BackupAndRestore(BackupAndRestoreOptions o, CallbackContext ctx);
    std::string type() const override { return "BackupAndRestore"; }
    Status onTrainBegin(TrainControl& c) override;
    Status onBatchEnd(TrainControl& c, const BatchLogs& b) override;
    Status onEpochEnd(TrainControl& c, int epoch, const Logs& logs) override;
    Status onTrainEnd(TrainControl& c, TrainEndReason reason) override;
    std::string dir() const;

private:
    BackupAndRestoreOptions m_o;
    CallbackContext m_ctx;
};

struct CsvLoggerOptions {
    std::string filename = "training.csv";  // relative to the run folder
    std::string separator = ",";
    bool append = false;
};

// One row per epoch: "epoch" (0-based, as Keras) then the sorted log names.
class CsvLogger : public Callback {
public:
    CsvLogger(CsvLoggerOptions o, CallbackContext ctx);
    std::string type() const override { return "CSVLogger"; }
    Status onTrainBegin(TrainControl&) override;
    Status onEpochEnd(TrainControl& c, int epoch, const Logs& logs) override;
    Result<nlohmann::json> saveState(const std::string& dir) const override;
    Status loadState(const nlohmann::json& s, const std::string& dir) override;
    std::string path() const;

private:
    CsvLoggerOptions m_o;
    CallbackContext m_ctx;
    std::vector<std::string> m_keys;
    int64_t m_bytes = 0;  // file size after the last complete row
};

// Stops training with an error naming the step and the last good checkpoint when the loss
// becomes NaN or infinite.
class TerminateOnNaN : public Callback {
public:
    std::string type() const override { return "TerminateOnNaN"; }
    Status onBatchEnd(TrainControl& c, const BatchLogs& b) override;
};

struct TensorBoardOptions {
    std::string logDir = "tb";       // relative to the run folder; "train" and "validation" inside
    int64_t updateFreqSteps = 0;     // 0: epoch values only ("update_freq": "epoch"); else every N steps
    // Every N epochs (0: never), per parameter: "<param>/histogram" of the weights and, for
    // trainable ones, "<param>/gradient" of the gradient of the epoch's last step.
    int histogramFreq = 0;
};

class TensorBoard : public Callback {
public:
    TensorBoard(TensorBoardOptions o, CallbackContext ctx);
    ~TensorBoard() override;
    std::string type() const override { return "TensorBoard"; }
    Status onTrainBegin(TrainControl&) override;
    Status onBatchEnd(TrainControl& c, const BatchLogs& b) override;
    Status onEpochEnd(TrainControl& c, int epoch, const Logs& logs) override;
    Status onTrainEnd(TrainControl& c, TrainEndReason reason) override;
    std::string logDir() const;

private:
    TensorBoardOptions m_o;
    CallbackContext m_ctx;
    std::unique_ptr<io::EventFileWriter> m_train;
    std::unique_ptr<io::EventFileWriter> m_validation;
};

// Parses one entry of "training.callbacks" ({"type": ..., options...}); ConfigError naming the
// field (e.g. "training.callbacks[1].patience") for unknown types, unknown or invalid options.
Result<std::unique_ptr<Callback>> makeCallback(const nlohmann::json& spec, const std::string& field,
                                               const CallbackContext& ctx);
// The known callback types, in documentation order.
std::vector<std::string> callbackTypes();

}  // namespace kiln::engine::train
