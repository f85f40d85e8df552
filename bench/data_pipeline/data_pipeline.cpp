// SPDX-License-Identifier: Apache-2.0
// Input-pipeline benchmark driver: makes the JPEG test set, makes a large hard-linked folder, and
// times Kiln's pipeline (decode, random crop 224, flip, ImageNet normalisation) in images/s,
// printing one JSON line per run (with peak resident memory).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <sys/resource.h>

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "engine/core/rng.h"
#include "engine/data/jpeg_decoder.h"
#include "engine/data/pipeline.h"

namespace {

using namespace kiln::engine;
using namespace kiln::engine::data;
namespace fs = std::filesystem;

int64_t peakRss() {
    std::ifstream in("/proc/self/status");
    for (std::string line; std::getline(in, line);)
        if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6)) * 1024;
    return 0;
}

// User + system CPU seconds of the whole process so far (every thread). On a machine shared with
// other jobs this moves far less than wall time from run to run.
double cpuSeconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// `count` JPEG photos-like pictures (smooth colour fields plus noise and shapes, quality 90)
// of width x height in DIR/class_k/, 10 classes. Kept when already there.
int makeJpegs(const std::string& dir, int count, int width, int height) {
    int made = 0;
    for (int i = 0; i < count; ++i) {
        const fs::path p =
            fs::path(dir) / ("class_" + std::to_string(i % 10)) / ("img_" + std::to_string(i) + ".jpg");
        if (fs::exists(p)) continue;
        fs::create_directories(p.parent_path());
        cv::Mat small(6, 8, CV_8UC3);
        for (int k = 0; k < 6 * 8 * 3; ++k)
            small.data[k] =
                static_cast<uchar>(rng::bits(7, static_cast<uint64_t>(i), static_cast<uint64_t>(k)) & 0xFF);
        cv::Mat img;
        cv::resize(small, img, cv::Size(width, height), 0, 0, cv::INTER_CUBIC);
        cv::Mat noise(height, width, CV_8UC3);
        cv::randu(noise, 0, 24);
        img += noise;
        for (int s = 0; s < 6; ++s) {
            const auto r = [&](int k, int mod) {
                return static_cast<int>(
                    rng::bits(11, static_cast<uint64_t>(i), static_cast<uint64_t>(s * 8 + k)) %
                    static_cast<uint32_t>(mod));
            };
            cv::circle(img, cv::Point(r(0, width), r(1, height)), 10 + r(2, 60),
                       cv::Scalar(r(3, 256), r(4, 256), r(5, 256)), -1, cv::LINE_AA);
        }
        if (!cv::imwrite(p.string(), img, {cv::IMWRITE_JPEG_QUALITY, 90})) {
            std::fprintf(stderr, "cannot write %s\n", p.string().c_str());
            return 1;
        }
        ++made;
    }
    std::fprintf(stderr, "%d new JPEG files in %s\n", made, dir.c_str());
    return 0;
}

// DST/class_k/n.png: `count` hard links to a few small PNG files (little disk, many samples).
int makeLinks(const std::string& dst, int count) {
    const fs::path base = fs::path(dst) / ".originals";
    fs::create_directories(base);
    std::vector<fs::path> originals;
    for (int k = 0; k < 8; ++k) {
        cv::Mat m(64, 64, CV_8UC3, cv::Scalar(30 * k, 255 - 30 * k, 128));
        cv::circle(m, cv::Point(32, 32), 5 + 3 * k, cv::Scalar(0, 0, 0), -1);
        originals.push_back(base / ("o" + std::to_string(k) + ".png"));
        if (!fs::exists(originals.back())) cv::imwrite(originals.back().string(), m);
    }
    int made = 0;
    for (int i = 0; i < count; ++i) {
        const fs::path p = fs::path(dst) / ("class_" + std::to_string(i % 10)) / (std::to_string(i) + ".png");
        if (fs::exists(p)) continue;
        fs::create_directories(p.parent_path());
        std::error_code ec;
        fs::create_hard_link(originals[static_cast<size_t>(i) % originals.size()], p, ec);
        if (ec) {
            std::fprintf(stderr, "cannot link %s: %s\n", p.string().c_str(), ec.message().c_str());
            return 1;
        }
        ++made;
    }
    std::fprintf(stderr, "%d new links in %s\n", made, dst.c_str());
    return 0;
}

int run(const std::string& dir, int workers, int batchSize, int epochs, const std::string& preset,
        int64_t shuffle) {
    auto src = ImageFolderSource::open(dir);
    if (!src.ok()) {
        std::fprintf(stderr, "%s\n", src.error().toString().c_str());
        return 2;
    }
    auto transforms = TransformList::preset(preset);
    if (!transforms.ok()) {
        std::fprintf(stderr, "%s\n", transforms.error().toString().c_str());
        return 2;
    }
    PipelineOptions o;
    o.workers = workers;
    o.batchSize = batchSize;
    o.prefetch = 2;
    o.shuffleBuffer = shuffle;
    o.seed = 1;
    auto p = Pipeline::create(*src, std::move(transforms.value()), o);
    if (!p.ok()) {
        std::fprintf(stderr, "%s\n", p.error().toString().c_str());
        return 2;
    }
    Batch b;
    double checksum = 0;
    JpegPathCounts last = jpegPathCounts();
    for (int e = 0; e < epochs; ++e) {
        const double cpu0 = cpuSeconds();
        if (!(*p)->startEpoch(e).ok()) return 1;
        for (;;) {
            auto r = (*p)->next(b);
            if (!r.ok()) {
                std::fprintf(stderr, "%s\n", r.error().toString().c_str());
                return 2;
            }
            if (!r.value()) break;
            checksum += b.columns[0][0];  // touch the data as a consumer would
        }
        const PipelineStats s = (*p)->stats();
        // How this epoch's JPEGs were decoded: only the crop, reduced for a resize, or in full by
        // OpenCV after the direct decoder gave up (files it never tried are in none of these).
        const JpegPathCounts now = jpegPathCounts();
        std::printf(
            "{\"peer\": \"kiln\", \"workers\": %d, \"epoch\": %d, \"images\": %lld, \"seconds\": %.3f, "
            "\"images_per_second\": %.1f, "
            "\"cpu_seconds\": %.3f, \"wait_fraction\": %.3f, \"skipped\": %lld, \"peak_rss_bytes\": %lld, "
            "\"checksum\": %.3f, \"jpeg_cropped\": %lld, \"jpeg_scaled\": %lld, \"jpeg_fallback\": %lld}\n",
            workers, e, static_cast<long long>(s.samples), s.seconds, s.samplesPerSecond, cpuSeconds() - cpu0,
            s.waitFraction, static_cast<long long>(s.skipped), static_cast<long long>(peakRss()), checksum,
            static_cast<long long>(now.cropped - last.cropped),
            static_cast<long long>(now.scaled() - last.scaled()),
            static_cast<long long>(now.fallback - last.fallback));
        last = now;
        std::fflush(stdout);
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> a(argv + 1, argv + argc);
    auto value = [&](const char* name, const std::string& fallback) {
        for (size_t i = 0; i + 1 < a.size(); ++i)
            if (a[i] == name) return a[i + 1];
        return fallback;
    };
    if (a.size() >= 2 && a[0] == "make-jpegs")
        return makeJpegs(a[1], std::stoi(value("--count", "2000")), 500, 375);
    if (a.size() >= 2 && a[0] == "make-links") return makeLinks(a[1], std::stoi(value("--count", "100000")));
    if (a.size() >= 2 && a[0] == "run")
        return run(a[1], std::stoi(value("--workers", "1")), std::stoi(value("--batch-size", "32")),
                   std::stoi(value("--epochs", "2")), value("--transforms", "imagenet-train"),
                   std::stoll(value("--shuffle-buffer", "0")));
    std::fprintf(stderr,
                 "usage: data_pipeline make-jpegs DIR [--count N]\n"
                 "       data_pipeline make-links DIR [--count N]\n"
                 "       data_pipeline run DIR [--workers N] [--batch-size B] [--epochs E] [--transforms "
                 "PRESET] [--shuffle-buffer N]\n");
    return 2;
}
