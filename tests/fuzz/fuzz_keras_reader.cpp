// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for Kiln's Keras reader, strict and as kiln-import runs it: any bytes give a
// model or an Error that explains itself and names the file or the layer, never a crash, a hang or
// a sanitizer report. Bytes that start as a zip archive are a whole .keras file; anything else is
// the config.json of a .keras archive that gets the weights of a seed archive, so that mutations
// reach the config reader past the archive's checksums. Damaged HDF5 bytes are left out: they
// test the HDF5 library rather than Kiln, and Debian's libhdf5 1.10.8 can spin for minutes on a
// damaged global heap (README, "Fuzzing"); the weights HDF5 reads here are Keras's own.
// Seeds: corpus/fuzz_keras_reader/, .keras files written by Keras (tests/fuzz/make_keras_seeds.py)
// and the config.json of two of them.
// kiln-fuzz-sources: engine/io/keras_import.cpp engine/io/hdf5_file.cpp engine/io/zip_archive.cpp
// kiln-fuzz-libs: kiln_io kiln_exec kiln_ops kiln_kernels kiln_graph kiln_core onnx onnx_proto protobuf::libprotobuf hdf5::hdf5 PkgConfig::MINIZIP
// kiln-fuzz-seconds: 30
#include <zip.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <utility>

#include <unistd.h>

#include "engine/io/hdf5_file.h"
#include "engine/io/keras_import.h"
#include "engine/io/zip_archive.h"
#include "engine/ops/model.h"

namespace {

std::filesystem::path g_dir;  // this process's scratch folder
std::string g_weights;        // model.weights.h5 of a seed archive; empty when none was found

// A .keras archive of `config` and g_weights at `path` (stored, not compressed).
bool writeArchive(const std::string& path, std::string_view config) {
    zipFile z = zipOpen64(path.c_str(), APPEND_STATUS_CREATE);
    if (!z) return false;
    bool ok = true;
    const std::pair<const char*, std::string_view> members[] = {{"config.json", config}, {"model.weights.h5", g_weights}};
    for (const auto& [name, bytes] : members) {
        ok = ok && zipOpenNewFileInZip64(z, name, nullptr, nullptr, 0, nullptr, 0, nullptr, 0, 0, 0) == ZIP_OK;
        ok = ok && zipWriteInFileInZip(z, bytes.data(), static_cast<unsigned>(bytes.size())) == ZIP_OK;
        ok = ok && zipCloseFileInZip(z) == ZIP_OK;
    }
    return zipClose(z, nullptr) == ZIP_OK && ok;
}

// Every error says what went wrong and where: the file, or the layer.
void checkError(const kiln::engine::Error& e) {
    if (e.message.empty() || (e.file.empty() && e.node.empty())) __builtin_trap();
}

void run(const std::string& file) {
    kiln::engine::io::ImportOptions user;
    user.placeholders = true;
    auto u = kiln::engine::io::loadModelFile(file, user);
    if (!u.ok()) checkError(u.error());
    auto r = kiln::engine::io::loadKeras(file);
    if (!r.ok()) {
        checkError(r.error());
        return;
    }
    // A model that reads strictly analyses and takes its weights.
    auto m = kiln::engine::ops::analyzeModel(r->graph);
    if (!m.ok()) __builtin_trap();
    auto params = kiln::engine::exec::ParamStore::create(*m, 0);
    (void)kiln::engine::io::applyWeights(*r, params);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    g_dir = std::filesystem::temp_directory_path() / ("kiln-fuzz-keras-" + std::to_string(getpid()));
    std::error_code ec;
    std::filesystem::create_directories(g_dir, ec);
    std::atexit([] {
        std::error_code ignored;
        std::filesystem::remove_all(g_dir, ignored);
    });
    if (const char* src = std::getenv("KILN_SOURCE_DIR")) {
        auto w = kiln::engine::io::readZipMember(std::string(src) + "/tests/fuzz/corpus/fuzz_keras_reader/tiny_functional.keras",
                                                 "model.weights.h5", int64_t{1} << 20);
        if (w.ok()) g_weights = std::move(*w);
    }
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    const std::string_view head = bytes.substr(0, 8);
    if (kiln::engine::io::Hdf5File::hasSignature(head)) return 0;
    if (!kiln::engine::io::hasZipSignature(head) && !g_weights.empty()) {
        const std::string file = (g_dir / "config.keras").string();
        if (writeArchive(file, bytes)) run(file);
        return 0;
    }
    const std::string file = (g_dir / "model.keras").string();
    {
        std::ofstream f(file, std::ios::binary | std::ios::trunc);
        f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        if (!f) return 0;
    }
    run(file);
    return 0;
}
