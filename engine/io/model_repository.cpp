// SPDX-License-Identifier: Apache-2.0
// Model repository writer: builds a version in <base>/<name>/.tmp-<version>-<pid>, then publishes
// it with one rename that refuses to replace an existing version (renameat2 RENAME_NOREPLACE).
#include "engine/io/model_repository.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <sstream>

#include "engine/core/json_checked.h"
#include "engine/core/sha256.h"
#include "engine/io/project.h"
#include "engine/io/safetensors.h"
#include "engine/io/saved_model_export.h"
#include "engine/io/tflite_export.h"

namespace kiln::engine::io {
namespace fs = std::filesystem;

namespace {

bool validName(const std::string& s) {
    if (s.empty() || s.size() > 200 || s == "." || s == "..") return false;
    for (char c : s)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) return false;
    return true;
}

std::string nowUtc() {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

nlohmann::json tensorSpec(const std::string& name, const Shape& shape, const std::string& dtype) {
    return {{"name", name}, {"dtype", dtype}, {"shape", shape.dims()}};
}

// The activation that produces an output node's values (so a client knows logits from probabilities).
std::string outputActivation(const ops::ModelInfo& m, int i) {
    const Node& n = m.graph.nodes[static_cast<size_t>(i)];
    const auto& a = m.nodes[static_cast<size_t>(i)].attrs;
    if (a.has("activation")) return a.getString("activation");
    if (n.op == "Softmax") return "softmax";
    if (n.op == "Sigmoid") return "sigmoid";
    if (n.op == "Dropout" && !m.nodes[static_cast<size_t>(i)].inputs.empty())
        return outputActivation(m, m.nodes[static_cast<size_t>(i)].inputs[0]);
    return "linear";
}

void syncDir(const std::string& dir) {
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        ::fsync(fd);
        ::close(fd);
    }
}

}  // namespace

Result<ExportFormats> parseFormats(const std::string& list) {
    ExportFormats f{false, false, false, false};
    std::stringstream ss(list);
    std::string item;
    while (std::getline(ss, item, ',')) {
        if (item == "onnx") f.onnx = true;
        else if (item == "savedmodel" || item == "saved_model") f.savedModel = true;
        else if (item == "kiln") f.kiln = true;
        else if (item == "tflite") f.tflite = true;
        else if (!item.empty())
            return Error(ErrorCode::InvalidArgument, "unknown export format \"" + item + "\" (use onnx, savedmodel, kiln, tflite)")
                .with("field", "formats");
    }
    if (!f.onnx && !f.savedModel && !f.kiln && !f.tflite)
        return Error(ErrorCode::InvalidArgument, "no export format given").with("field", "formats");
    return f;
}

std::vector<int64_t> listVersions(const std::string& modelDir) {
    std::vector<int64_t> out;
    std::error_code ec;
    for (fs::directory_iterator it(modelDir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.empty() || name.size() > 18 || name.find_first_not_of("0123456789") != std::string::npos) continue;
        if (!it->is_directory(ec)) continue;
        out.push_back(std::stoll(name));
    }
    std::sort(out.begin(), out.end());
    return out;
}

int64_t nextVersion(const std::string& modelDir) {
    auto v = listVersions(modelDir);
    return v.empty() ? 1 : v.back() + 1;
}

// Every regular file under `dir` (relative path, size, SHA-256), sorted by path: kiln-serve loads a
// version copied in file by file only once all of them are there with these sizes and digests.
Result<nlohmann::json> fileManifest(const std::string& dir) {
    std::vector<std::pair<std::string, fs::path>> files;
    std::error_code ec;
    for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        if (it->is_regular_file(ec)) files.emplace_back(fs::relative(it->path(), dir, ec).generic_string(), it->path());
    if (ec) return Error(ErrorCode::FileRead, "cannot list " + dir + ": " + ec.message()).withFile(dir).with("reason", ec.message());
    std::sort(files.begin(), files.end());
    nlohmann::json manifest = nlohmann::json::array();
    for (const auto& [rel, path] : files) {
        KILN_ASSIGN(std::string digest, sha256File(path.string()));
        const auto size = fs::file_size(path, ec);
        if (ec) return Error(ErrorCode::FileRead, "cannot stat " + path.string()).withFile(path.string()).with("reason", ec.message());
        manifest.push_back({{"path", rel}, {"size", size}, {"sha256", digest}});
    }
    return manifest;
}

nlohmann::json modelDescription(const ops::ModelInfo& model, const RepositoryExport& req, int64_t version,
                                const RepositoryResult& result, const nlohmann::json& manifest) {
    nlohmann::json inputs = nlohmann::json::array(), outputs = nlohmann::json::array();
    for (int i : model.inputs) {
        const auto& info = model.nodes[static_cast<size_t>(i)];
        inputs.push_back(tensorSpec(model.graph.nodes[static_cast<size_t>(i)].name, info.output,
                                    info.attrs.getString("dtype") == "int32" ? "int32" : "float32"));
    }
    for (int o : model.outputs) {
        auto spec = tensorSpec(model.graph.nodes[static_cast<size_t>(o)].name, model.nodes[static_cast<size_t>(o)].output, "float32");
        spec["activation"] = outputActivation(model, o);
        outputs.push_back(std::move(spec));
    }
    nlohmann::json files = nlohmann::json::object();
    if (req.formats.onnx) files["onnx"] = "model.onnx";
    if (req.formats.savedModel) files["saved_model"] = "saved_model.pb";
    if (req.formats.tflite) files["tflite"] = "model.tflite";
    if (!req.onnxInt8.empty()) files["onnx_int8"] = "model.int8.onnx";
    if (!req.tfliteInt8.empty()) files["tflite_int8"] = "model.int8.tflite";
    if (req.formats.kiln) {
        files["kiln_project"] = "model.kiln";
        files["weights"] = "weights.safetensors";
    }
    auto parsedPre = parseJsonChecked(req.meta.preprocessingJson.empty() ? "{}" : req.meta.preprocessingJson, JsonLimits{},
                                      "preprocessing");
    nlohmann::json pre = parsedPre ? std::move(parsedPre.value()) : nlohmann::json::object();
    nlohmann::json parity = nullptr;
    if (result.parityChecked)
        parity = {{"batch", result.parity.batch},
                  {"source", req.paritySource},
                  {"max_abs_diff", result.parity.maxAbsDiff},
                  {"worst_output", result.parity.worstOutput},
                  {"tolerance", {{"abs", kParityAbsTolerance}, {"rel", kParityRelTolerance}}},
                  {"passed", result.parity.passed}};
    return {{"format", "kiln-model"},
            {"version", kModelJsonVersion},
            {"name", req.name},
            {"model_version", version},
            {"kiln_version", req.meta.kilnVersion},
            {"created", nowUtc()},
            {"layout", "NHWC"},
            {"files", files},
            {"manifest", manifest},
            {"signature", {{"name", kServingSignature}, {"method_name", kPredictMethod}}},
            {"inputs", inputs},
            {"outputs", outputs},
            {"preprocessing", pre},
            {"class_names", req.meta.classNames},
            {"metrics", req.metrics.is_null() ? nlohmann::json::object() : req.metrics},
            {"parity", parity},
            {"quantization", req.quantization}};
}

Result<RepositoryResult> exportToRepository(const ops::ModelInfo& model, exec::ParamStore& params,
                                            const RepositoryExport& req, ThreadPool& pool, const ProgressFn& progress) {
    auto step = [&](int pct, const std::string& what) {
        if (progress) progress(pct, what);
    };
    if (!validName(req.name))
        return Error(ErrorCode::InvalidArgument, "model name \"" + req.name + "\" may only hold letters, digits, '_', '-' and '.'")
            .with("field", "name");
    if (req.base.empty()) return Error(ErrorCode::InvalidArgument, "no repository base path given").with("field", "base");
    if (req.version < 0) return Error(ErrorCode::InvalidArgument, "the version must be positive").with("field", "version");
    if (req.formats.kiln && req.projectText.empty())
        return Error(ErrorCode::InvalidArgument, "the kiln format needs the project text").with("field", "project");

    RepositoryResult result;
    ModelMetadata meta = req.meta;
    if (meta.name.empty()) meta.name = req.name;

    // Everything is produced in memory and checked before the first byte is written.
    std::string onnxBytes, savedBytes, tfliteBytes;
    if (req.formats.onnx) {
        step(5, "onnx");
        KILN_ASSIGN(onnxBytes, exportOnnx(model, params, meta, &result.warnings));
    }
    if (req.formats.onnx) {
        // Plugin operations are checked too: Kiln's reader maps their custom-domain nodes back to
        // the loaded plugin (another ONNX runtime still needs its own implementation of them).
        step(20, "parity");
        std::vector<Tensor> batch = req.parityInputs.empty() ? syntheticInputs(model, 8, 7) : req.parityInputs;
        KILN_ASSIGN(result.parity, checkOnnxParity(model, params, onnxBytes, batch, pool));
        result.parityChecked = true;
        if (!result.parity.passed) {
            char buf[64];
            std::snprintf(buf, sizeof buf, "%.3g", result.parity.maxAbsDiff);
            return Error(ErrorCode::Unsupported, std::string("the exported ONNX model differs from Kiln's by up to ") + buf +
                                                     " on output " + result.parity.worstOutput +
                                                     ", above the tolerance; nothing was exported")
                .with("what", "parity")
                .with("max_abs_diff", buf);
        }
    }
    if (req.formats.savedModel) {
        step(45, "savedmodel");
        KILN_ASSIGN(savedBytes, exportSavedModel(model, params, meta));
    }
    if (req.formats.tflite) {
        step(50, "tflite");
        KILN_ASSIGN(tfliteBytes, exportTflite(model, params, meta));
    }

    const std::string modelDir = (fs::path(req.base) / req.name).string();
    std::error_code ec;
    fs::create_directories(modelDir, ec);
    if (ec) return Error(ErrorCode::FileWrite, "cannot create " + modelDir + ": " + ec.message()).withFile(modelDir).with("reason", ec.message());

    int64_t version = req.version > 0 ? req.version : nextVersion(modelDir);
    if (req.version > 0 && fs::exists(fs::path(modelDir) / std::to_string(version)))
        return Error(ErrorCode::InvalidArgument, "version " + std::to_string(version) + " of " + req.name + " already exists")
            .with("field", "version");
    const std::string tmp = (fs::path(modelDir) / (".tmp-" + std::to_string(version) + "-" + std::to_string(::getpid()))).string();
    fs::remove_all(tmp, ec);
    fs::create_directories(tmp, ec);
    if (ec) return Error(ErrorCode::FileWrite, "cannot create " + tmp + ": " + ec.message()).withFile(tmp).with("reason", ec.message());
    auto cleanup = [&](Error e) {
        std::error_code ignored;
        fs::remove_all(tmp, ignored);
        return e;
    };
    auto write = [&](const std::string& rel, const std::string& bytes) -> Status {
        Status st = writeFileAtomic((fs::path(tmp) / rel).string(), bytes);
        if (st.ok()) result.files.push_back(rel);
        return st;
    };

    step(60, "write");
    if (req.formats.onnx)
        if (Status st = write("model.onnx", onnxBytes); !st.ok()) return cleanup(st.error());
    if (!req.onnxInt8.empty())
        if (Status st = write("model.int8.onnx", req.onnxInt8); !st.ok()) return cleanup(st.error());
    if (req.formats.savedModel) {
        if (Status st = write("saved_model.pb", savedBytes); !st.ok()) return cleanup(st.error());
        fs::create_directories(fs::path(tmp) / "variables", ec);
        if (ec) return cleanup(Error(ErrorCode::FileWrite, "cannot create variables/: " + ec.message()).withFile(tmp).with("reason", ec.message()));
        result.files.push_back("variables/");
    }
    if (req.formats.tflite)
        if (Status st = write("model.tflite", tfliteBytes); !st.ok()) return cleanup(st.error());
    if (!req.tfliteInt8.empty())
        if (Status st = write("model.int8.tflite", req.tfliteInt8); !st.ok()) return cleanup(st.error());
    if (req.formats.kiln) {
        if (Status st = write("model.kiln", req.projectText); !st.ok()) return cleanup(st.error());
        std::vector<NamedTensor> tensors;
        for (const auto& p : params.params()) tensors.push_back({p.name, p.value});
        Status st = saveSafetensors((fs::path(tmp) / "weights.safetensors").string(), tensors,
                                    {{"format", "kiln-weights"}, {"model", req.name}});
        if (!st.ok()) return cleanup(st.error());
        result.files.push_back("weights.safetensors");
    }

    // Publish: take the next free number if another writer got there first.
    step(90, "publish");
    auto manifest = fileManifest(tmp);
    if (!manifest) return cleanup(manifest.error());
    for (int attempt = 0;; ++attempt) {
        const std::string target = (fs::path(modelDir) / std::to_string(version)).string();
        result.version = version;
        result.versionDir = target;
        if (Status st = write(kModelJsonName, modelDescription(model, req, version, result, manifest.value()).dump(2) + "\n"); !st.ok())
            return cleanup(st.error());
        result.files.pop_back();
        syncDir(tmp);
        if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, target.c_str(), RENAME_NOREPLACE) == 0) break;
        int err = errno;
        if ((err == EEXIST || err == ENOTEMPTY) && req.version == 0 && attempt < 20) {
            version = std::max(version + 1, nextVersion(modelDir));
            continue;
        }
        return cleanup(Error(ErrorCode::FileWrite, "cannot publish " + target + ": " + std::strerror(err))
                           .withFile(target).with("reason", std::strerror(err)));
    }
    result.files.push_back(kModelJsonName);
    syncDir(modelDir);
    step(100, "done");
    return result;
}

}  // namespace kiln::engine::io
