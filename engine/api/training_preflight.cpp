// SPDX-License-Identifier: Apache-2.0
// Memory prediction against the device's free memory, and a short timed run.
#include "engine/api/training_preflight.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>
#include <vector>

#include "engine/api/devices.h"
#include "engine/api/internal/training_setup.h"
#include "engine/core/precision.h"
#include "engine/exec/memory_assistant.h"

namespace kiln::engine::api {

std::string formatBytes(uint64_t bytes) { return exec::formatBytes(bytes); }

uint64_t hostAvailableMemory() {
    std::ifstream in("/proc/meminfo");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("MemAvailable:", 0) != 0) continue;
        std::istringstream fields(line.substr(13));
        uint64_t kib = 0;
        if (fields >> kib) return kib * 1024;
    }
    return 0;
}

Result<PreflightReport> preflightTraining(const io::Project& project, const std::string& projectPath,
                                          const PreflightRequest& request, const std::atomic<bool>* cancel) {
    PrepareOptions setup;
    setup.batchSize = request.batchSize;
    setup.threads = request.threads;
    KILN_ASSIGN(PreparedModel prepared, prepareModel(project, projectPath, setup));
    const ops::ModelInfo& model = prepared.model;
    const train::TrainingConfig& config = prepared.config;

    PreflightReport r;
    r.device = config.device;
    r.precision = config.precision;
    r.batch = config.batchSize;
    auto device = Device::parse(config.device);
    if (!device.ok()) return device.error().withFile(projectPath);
    auto precision = parsePrecision(config.precision);
    if (!precision.ok()) return precision.error().withFile(projectPath);

    exec::MemoryOptions options;
    options.batch = config.batchSize;
    options.precision = *precision;
    options.optimizer = config.optimizer;
    for (const auto& loss : config.losses) options.losses.push_back(loss.spec);
    options.cuda = !device->isCpu();
    auto memory = exec::estimateMemory(model, options);
    if (!memory.ok()) return io::locate(memory.error(), project);
    r.memory = {memory->batch, memory->parameters, memory->lowPrecisionCopy,
                memory->gradients, memory->optimizerState, memory->activations,
                memory->workspace, memory->convWorkspaceLimit, memory->bytesPerSample};
    r.peakBytes = options.cuda ? memory->totalWithConvWorkspace() : memory->total();
    if (device->isCpu()) {
        r.budgetBytes = hostAvailableMemory();
    } else {
        for (const auto& gpu : gpuSystemInfo().gpus)
            if (gpu.index == device->index) r.budgetBytes = gpu.freeMemory;
    }
    if (r.budgetBytes > 0 && r.peakBytes > r.budgetBytes) {
        r.fits = false;
        // A tenth kept free: other programs' memory moves while this one starts.
        auto fits = exec::largestBatch(model, options, r.budgetBytes / 10 * 9, config.batchSize);
        r.suggestedBatch = fits.ok() ? *fits : 0;
    }
    if (request.calibrationSteps <= 0) return r;

    // A few real steps on the project's data, on its device; the trainer is thrown away after.
    // (prepared moves into the trainer's set-up: what comes after uses these copies.)
    const int64_t batch = config.batchSize;
    const double validationSplit = config.validationSplit;
    setup.checkData = [&](const train::DataBundle& data) -> Status {
        if (data.trainStream) {
            r.trainingSamples = data.trainStream->samplesPerEpoch();
        } else {
            const int64_t rows = data.train.size();
            r.trainingSamples = rows - static_cast<int64_t>(std::floor(double(rows) * validationSplit));
        }
        r.stepsPerEpoch = (r.trainingSamples + batch - 1) / batch;
        return {};
    };
    KILN_ASSIGN(PreparedTraining training, prepareTraining(project, projectPath, std::move(prepared), setup));
    auto& trainer = training.trainer;
    // The steps of a real fit (data, forward, backward, update, metrics), stopped after
    // calibrationSteps + 1 of them; the first one (plan compilation, first batch) is timed apart.
    std::atomic<bool> stop{false};
    std::vector<double> seconds;
    auto last = std::chrono::steady_clock::now();
    auto fit = trainer->fit(
        [&](const train::TrainEvent& e) {
            if (e.kind != train::TrainEvent::Kind::Step) return;
            const auto now = std::chrono::steady_clock::now();
            seconds.push_back(std::chrono::duration<double>(now - last).count());
            last = now;
            if (static_cast<int>(seconds.size()) > request.calibrationSteps || (cancel && cancel->load())) stop = true;
        },
        &stop);
    if (!fit.ok()) return io::locate(fit.error(), project);
    if (cancel && cancel->load()) return Error(ErrorCode::Cancelled, "preflight timing cancelled");
    if (seconds.size() < 2) return r;  // an epoch shorter than the timing: nothing to extrapolate
    seconds.erase(seconds.begin() + std::min<size_t>(seconds.size(), size_t(request.calibrationSteps) + 1), seconds.end());
    r.firstStepSeconds = seconds.front();
    std::vector<double> rest(seconds.begin() + 1, seconds.end());
    r.measuredSteps = static_cast<int>(rest.size());
    std::nth_element(rest.begin(), rest.begin() + rest.size() / 2, rest.end());
    r.secondsPerStep = rest[rest.size() / 2];
    r.samplesPerSecond = r.secondsPerStep > 0 ? double(batch) / r.secondsPerStep : 0;
    r.epochSeconds = double(r.stepsPerEpoch) * r.secondsPerStep;
    return r;
}

}  // namespace kiln::engine::api
