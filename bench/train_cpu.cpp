// SPDX-License-Identifier: Apache-2.0
// train_cpu: CPU training throughput of Kiln projects on in-memory synthetic data (median
// samples/s over timed windows of full training steps), for comparison with bench/torch_train.py.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <pmmintrin.h>
#include <xmmintrin.h>

#include "engine/core/cpu_isa.h"
#include "engine/io/project.h"
#include "engine/ops/model.h"
#include "engine/train/config.h"
#include "engine/train/trainer.h"

namespace {
using namespace kiln::engine;
using Clock = std::chrono::steady_clock;

struct Options {
    std::vector<std::string> projects;
    int threads = 2;
    double warmupSeconds = 1.0;
    int64_t warmupSteps = 10;  // at least this many, and at least warmupSeconds
    int windows = 7;
    double windowSeconds = 0.5;
    int64_t fixedSteps = 0;    // > 0: one window of exactly this many steps (for profilers)
    bool quiet = false;
    bool keepDenormals = false;
};

const char* kUsage =
    "usage: train_cpu [options] [project.kiln ...]\n"
    "Times full CPU training steps (forward, loss, backward, optimizer) of each project on\n"
    "synthetic in-memory data and prints the median samples/s over several windows.\n"
    "Without projects, runs every *.kiln file in the benchmark model folder.\n"
    "  --threads N          thread pool size (default 2)\n"
    "  --warmup-seconds S   warm-up time before timing (default 1.0; at least 10 steps)\n"
    "  --windows N          number of timed windows (default 7)\n"
    "  --window-seconds S   target length of one window (default 0.5)\n"
    "  --steps N            instead: warm up 3 steps, then time exactly N steps (for profilers)\n"
    "  --keep-denormals     do not flush denormal floats to zero (see below)\n"
    "  --quiet              print only the RESULT lines\n"
    "Denormals are flushed to zero (FTZ/DAZ) by default: training one batch over and over drives\n"
    "the loss towards zero and can drive gradients into the denormal range, where arithmetic is\n"
    "much slower; flushing keeps the step cost independent of how far training has gone.\n"
    "bench/torch_train.py does the same (torch.set_flush_denormal).\n";

bool parseArgs(int argc, char** argv, Options& o) {
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto next = [&](const char* what) -> const char* {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "train_cpu: %s needs a value\n", what);
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--threads") o.threads = std::atoi(next("--threads"));
        else if (a == "--warmup-seconds") o.warmupSeconds = std::atof(next("--warmup-seconds"));
        else if (a == "--windows") o.windows = std::atoi(next("--windows"));
        else if (a == "--window-seconds") o.windowSeconds = std::atof(next("--window-seconds"));
        else if (a == "--steps") o.fixedSteps = std::atoll(next("--steps"));
        else if (a == "--quiet") o.quiet = true;
        else if (a == "--keep-denormals") o.keepDenormals = true;
        else if (a == "-h" || a == "--help") {
            std::fputs(kUsage, stdout);
            std::exit(0);
        } else if (!a.empty() && a[0] == '-') {
            std::fprintf(stderr, "train_cpu: unknown option %s\n%s", a.c_str(), kUsage);
            return false;
        } else {
            o.projects.push_back(a);
        }
    }
    if (o.threads < 1 || o.windows < 1 || o.windowSeconds <= 0 || o.fixedSteps < 0) {
        std::fprintf(stderr, "train_cpu: invalid option value\n");
        return false;
    }
    return true;
}

// Uniform [-1, 1) inputs and uniformly drawn labels, from a fixed seed. Input columns are named
// after their Input nodes; loss targets get the column the loss names ("label").
Result<train::DataBundle> syntheticData(const ops::ModelInfo& model, const train::TrainingConfig& config,
                                        int64_t count, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<data::Column> columns;
    train::DataBundle bundle;
    for (int i : model.inputs) {
        const auto& node = model.graph.nodes[static_cast<size_t>(i)];
        data::Column c;
        c.name = node.name;
        c.sampleShape = model.nodes[static_cast<size_t>(i)].output.withoutFirst();
        c.values.resize(static_cast<size_t>(count * c.sampleSize()));
        for (float& v : c.values) v = uniform(rng);
        bundle.inputs[node.name] = node.name;
        columns.push_back(std::move(c));
    }
    for (const auto& loss : config.losses) {
        const Shape out = model.info(loss.spec.output).output.withoutFirst();
        data::Column c;
        c.name = loss.target;
        if (loss.spec.type == "SparseCategoricalCrossentropy") {
            c.sampleShape = Shape{};
            std::uniform_int_distribution<int> cls(0, static_cast<int>(out.numel()) - 1);
            c.values.resize(static_cast<size_t>(count));
            for (float& v : c.values) v = static_cast<float>(cls(rng));
        } else {  // binary / one-hot style targets: 0 or 1 per output value
            c.sampleShape = out;
            std::bernoulli_distribution bit(0.5);
            c.values.resize(static_cast<size_t>(count * out.numel()));
            for (float& v : c.values) v = bit(rng) ? 1.0f : 0.0f;
        }
        columns.push_back(std::move(c));
    }
    KILN_ASSIGN(bundle.train, data::InMemoryDataset::create(count, std::move(columns)));
    bundle.description = "synthetic";
    return bundle;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string modelName(const io::Project& p) {
    return p.name.empty() ? std::filesystem::path(p.path).stem().string() : p.name;
}

int benchProject(const std::string& path, const Options& opt, ThreadPool& pool) {
    auto fail = [&](const Error& e) {
        std::fprintf(stderr, "train_cpu: %s: %s\n", path.c_str(), e.toString().c_str());
        return 1;
    };
    auto project = io::loadProject(path);
    if (!project.ok()) return fail(project.error());
    auto model = ops::analyzeModel(project->graph);
    if (!model.ok()) return fail(io::locate(model.error(), *project));
    auto config = train::parseTrainingConfig(project->training, project->graph);
    if (!config.ok()) return fail(config.error());
    config->validationSplit = 0;
    const int64_t batch = config->batchSize;
    auto data = syntheticData(*model, *config, batch * 4, 1);
    if (!data.ok()) return fail(data.error());
    auto trainer = train::Trainer::create(*model, *config, std::move(*data), pool);
    if (!trainer.ok()) return fail(trainer.error());
    train::Trainer& t = **trainer;

    int64_t step = 0;
    auto runSteps = [&](int64_t n) -> Status {
        for (int64_t k = 0; k < n; ++k) KILN_TRY(t.stepOnce(step++));
        return {};
    };

    // Warm-up: at least warmupSteps steps and warmupSeconds; the later half sizes the windows.
    std::vector<double> windows;
    int64_t stepsPerWindow = opt.fixedSteps;
    if (opt.fixedSteps > 0) {
        if (Status s = runSteps(3); !s.ok()) return fail(s.error());
    } else {
        const auto w0 = Clock::now();
        int64_t done = 0;
        auto half = w0;
        int64_t halfSteps = 0;
        while (done < opt.warmupSteps ||
               std::chrono::duration<double>(Clock::now() - w0).count() < opt.warmupSeconds) {
            if (Status s = runSteps(1); !s.ok()) return fail(s.error());
            ++done;
            if (done == opt.warmupSteps / 2) {
                half = Clock::now();
                halfSteps = done;
            }
        }
        const double perStep =
            std::chrono::duration<double>(Clock::now() - half).count() / static_cast<double>(done - halfSteps);
        stepsPerWindow = std::max<int64_t>(1, std::llround(opt.windowSeconds / perStep));
    }
    const int nWindows = opt.fixedSteps > 0 ? 1 : opt.windows;
    for (int w = 0; w < nWindows; ++w) {
        const auto t0 = Clock::now();
        if (Status s = runSteps(stepsPerWindow); !s.ok()) return fail(s.error());
        const double sec = std::chrono::duration<double>(Clock::now() - t0).count();
        windows.push_back(static_cast<double>(stepsPerWindow * batch) / sec);
    }
    const double med = median(windows);
    const auto* plan = t.trainPlan();
    const exec::PlanStats stats = plan ? plan->stats() : exec::PlanStats{};
    const float loss = plan ? plan->totalLoss() : 0.0f;
    const std::string name = modelName(*project);
    if (!opt.quiet) {
        std::printf("%-10s batch %4lld  %lld params  %lld steps/window x %d  median %.0f samples/s "
                    "(min %.0f, max %.0f)  %.3f ms/step  arena %.2f MiB (unplanned %.2f MiB, %zu plan steps)  loss %.4f\n",
                    name.c_str(), static_cast<long long>(batch), static_cast<long long>(model->parameterCount(true)),
                    static_cast<long long>(stepsPerWindow), nWindows, med,
                    *std::min_element(windows.begin(), windows.end()),
                    *std::max_element(windows.begin(), windows.end()), 1e3 * static_cast<double>(batch) / med,
                    static_cast<double>(stats.arenaBytes) / (1 << 20),
                    static_cast<double>(stats.unplannedBytes) / (1 << 20), stats.steps, static_cast<double>(loss));
    }
    // Machine-readable line for bench/run_train_cpu.sh.
    // loss: of the last timed step (with --steps N, the same step every run, for comparing
    // engines); isa: the CPU kernel variant that ran.
    std::printf("RESULT\tkiln\t%s\t%.1f\tbatch=%lld\tarena_bytes=%zu\tunplanned_bytes=%zu\tplan_steps=%zu"
                "\tloss=%.9g\tisa=%s\n",
                name.c_str(), med, static_cast<long long>(batch), stats.arenaBytes, stats.unplannedBytes, stats.steps,
                static_cast<double>(loss), std::string(cpuIsaName(cpuIsa())).c_str());
    std::fflush(stdout);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    Options opt;
    if (!parseArgs(argc, argv, opt)) return 2;
    if (opt.projects.empty()) {
        const std::filesystem::path dir = KILN_BENCH_MODELS_DIR;
        std::error_code ec;
        for (const auto& e : std::filesystem::directory_iterator(dir, ec))
            if (e.path().extension() == ".kiln") opt.projects.push_back(e.path().string());
        std::sort(opt.projects.begin(), opt.projects.end());
        if (opt.projects.empty()) {
            std::fprintf(stderr, "train_cpu: no projects given and none found in %s\n", dir.string().c_str());
            return 2;
        }
    }
    // Before the pool starts: its threads inherit the calling thread's MXCSR.
    if (!opt.keepDenormals) {
        _MM_SET_FLUSH_ZERO_MODE(_MM_FLUSH_ZERO_ON);
        _MM_SET_DENORMALS_ZERO_MODE(_MM_DENORMALS_ZERO_ON);
    }
    ThreadPool pool(opt.threads);
    int rc = 0;
    for (const auto& p : opt.projects) rc |= benchProject(p, opt, pool);
    return rc;
}
