// SPDX-License-Identifier: Apache-2.0
// The one-pass :predict reader alone: reads the body of a file (or a generated fashion_mlp body:
// one 28x28x1 image of 4-decimal numbers, as bench/serve/run.sh sends) REPS times per round and
// prints the best and median round's time per body, in thread CPU time.
// Usage: reader_bench [BODY.json] [--reps N] [--rounds N]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "engine/serve/predict_reader.h"

using namespace kiln::engine::serve;

namespace {

double threadSeconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// {"instances": [[[[v], [v], ...28], ...28]]} with v uniform in [0, 1) rounded to 4 decimals, in
// Python's json.dump spelling (", " between elements, shortest repr of each number).
std::string generatedBody() {
    std::mt19937 rng(3);
    std::uniform_int_distribution<int> tenThousandths(0, 9999);
    std::string s = "{\"instances\": [[";
    for (int r = 0; r < 28; ++r) {
        s += r ? ", [" : "[";
        for (int c = 0; c < 28; ++c) {
            int v = tenThousandths(rng);
            char num[16];
            if (v == 0) {
                std::snprintf(num, sizeof num, "0.0");
            } else {
                std::snprintf(num, sizeof num, "0.%04d", v);
                std::string t = num;
                while (t.back() == '0') t.pop_back();
                std::snprintf(num, sizeof num, "%s", t.c_str());
            }
            s += c ? ", [" : "[";
            s += num;
            s += ']';
        }
        s += ']';
    }
    s += "]]}";
    return s;
}

}  // namespace

int main(int argc, char** argv) {
    std::string body;
    int reps = 3000, rounds = 7;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--reps" && i + 1 < argc) {
            reps = std::atoi(argv[++i]);
        } else if (a == "--rounds" && i + 1 < argc) {
            rounds = std::atoi(argv[++i]);
        } else {
            std::ifstream f(a, std::ios::binary);
            if (!f) {
                std::fprintf(stderr, "reader_bench: cannot read %s\n", a.c_str());
                return 2;
            }
            std::stringstream ss;
            ss << f.rdbuf();
            body = ss.str();
        }
    }
    if (reps < 1 || rounds < 1) {
        std::fprintf(stderr, "reader_bench: --reps and --rounds take a whole number of at least 1\n");
        return 2;
    }
    if (body.empty()) body = generatedBody();
    ModelSignature sig;
    TensorSpec in;
    in.name = "image";
    in.dtype = "DT_FLOAT";
    in.shape = {-1, 28, 28, 1};
    sig.inputs.push_back(in);
    RequestLimits limits;
    auto first = readPlainPredict(body, sig, limits, {});
    if (!first || !*first) {
        std::fprintf(stderr, "reader_bench: the reader declined or refused the body\n");
        return 1;
    }
    std::vector<double> perBody;
    double checksum = 0;
    for (int r = 0; r < rounds; ++r) {
        const double t0 = threadSeconds();
        for (int i = 0; i < reps; ++i) {
            auto out = readPlainPredict(body, sig, limits, {});
            checksum += (*out).value().inputs[0].data<float>()[i % 784];
        }
        perBody.push_back((threadSeconds() - t0) / reps * 1e6);
    }
    std::sort(perBody.begin(), perBody.end());
    std::printf("reader_bench: %zu-byte body, best %.2f us, median %.2f us per body (checksum %.3f)\n", body.size(),
                perBody.front(), perBody[perBody.size() / 2], checksum);
    return 0;
}
