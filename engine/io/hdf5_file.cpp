// SPDX-License-Identifier: Apache-2.0
// Hdf5File on the HDF5 C library (Debian's serial build). That build is not thread-safe, so every
// call into it holds one process-wide lock; HDF5's own error printing is switched off because each
// failure comes back as an Error naming the HDF5 path.
#include "engine/io/hdf5_file.h"

#include <hdf5.h>

#include <cstring>
#include <mutex>

namespace kiln::engine::io {
namespace {

std::mutex& hdf5Lock() {
    static std::mutex m;
    return m;
}

void quietErrors() {
    static std::once_flag once;
    std::call_once(once, [] { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); });
}

// One HDF5 identifier, closed with its own close function.
class Hid {
public:
    Hid(hid_t id, herr_t (*close)(hid_t)) : m_id(id), m_close(close) {}
    Hid(const Hid&) = delete;
    Hid& operator=(const Hid&) = delete;
    ~Hid() {
        if (m_id >= 0) m_close(m_id);
    }
    hid_t get() const { return m_id; }
    bool ok() const { return m_id >= 0; }

private:
    hid_t m_id;
    herr_t (*m_close)(hid_t);
};

std::string objectPath(const std::string& p) { return p.empty() ? std::string("/") : p; }

}  // namespace

struct Hdf5File::State {
    hid_t file = -1;
    std::string image;  // the bytes of a file opened from memory; HDF5 copies them, kept for clarity of ownership
    ~State() {
        if (file >= 0) {
            std::lock_guard lock(hdf5Lock());
            H5Fclose(file);
        }
    }
};

Hdf5File::Hdf5File(Hdf5File&&) noexcept = default;
Hdf5File& Hdf5File::operator=(Hdf5File&&) noexcept = default;
Hdf5File::~Hdf5File() = default;

bool Hdf5File::hasSignature(std::string_view b) {
    static constexpr char kSig[] = "\x89HDF\r\n\x1a\n";
    return b.size() >= 8 && std::memcmp(b.data(), kSig, 8) == 0;
}

Error Hdf5File::error(ErrorCode code, const std::string& path, const std::string& what) const {
    return Error(code, "HDF5 object \"" + objectPath(path) + "\": " + what)
        .withFile(m_file)
        .with("hdf5_path", objectPath(path))
        .with("reason", what);
}

Result<Hdf5File> Hdf5File::open(const std::string& path) {
    std::lock_guard lock(hdf5Lock());
    quietErrors();
    Hdf5File f;
    f.m_file = path;
    f.m_state = std::make_unique<State>();
    if (H5Fis_hdf5(path.c_str()) <= 0)
        return Error(ErrorCode::ParseError, "not an HDF5 file").withFile(path).with("reason", "not an HDF5 file");
    f.m_state->file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f.m_state->file < 0)
        return Error(ErrorCode::ParseError, "the HDF5 file cannot be opened (damaged or truncated)")
            .withFile(path)
            .with("reason", "damaged HDF5 file");
    return f;
}

Result<Hdf5File> Hdf5File::openImage(std::string bytes, const std::string& file) {
    std::lock_guard lock(hdf5Lock());
    quietErrors();
    Hdf5File f;
    f.m_file = file;
    f.m_state = std::make_unique<State>();
    if (!hasSignature(bytes))
        return Error(ErrorCode::ParseError, "not an HDF5 file").withFile(file).with("reason", "not an HDF5 file");
    f.m_state->image = std::move(bytes);
    Hid fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
    if (!fapl.ok() || H5Pset_fapl_core(fapl.get(), 1 << 20, 0) < 0 ||
        H5Pset_file_image(fapl.get(), f.m_state->image.data(), f.m_state->image.size()) < 0)
        return Error(ErrorCode::Internal, "HDF5 could not take the file image of " + file);
    f.m_state->file = H5Fopen(file.c_str(), H5F_ACC_RDONLY, fapl.get());
    if (f.m_state->file < 0)
        return Error(ErrorCode::ParseError, "the HDF5 file cannot be opened (damaged or truncated)")
            .withFile(file)
            .with("reason", "damaged HDF5 file");
    f.m_state->image.clear();
    f.m_state->image.shrink_to_fit();
    return f;
}

bool Hdf5File::isGroup(const std::string& path) const {
    std::lock_guard lock(hdf5Lock());
    H5O_info_t info;
    if (H5Oget_info_by_name2(m_state->file, objectPath(path).c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT) < 0) return false;
    return info.type == H5O_TYPE_GROUP;
}

bool Hdf5File::isDataset(const std::string& path) const {
    std::lock_guard lock(hdf5Lock());
    H5O_info_t info;
    if (H5Oget_info_by_name2(m_state->file, objectPath(path).c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT) < 0) return false;
    return info.type == H5O_TYPE_DATASET;
}

Result<std::vector<std::string>> Hdf5File::children(const std::string& group) const {
    std::lock_guard lock(hdf5Lock());
    Hid g(H5Gopen2(m_state->file, objectPath(group).c_str(), H5P_DEFAULT), H5Gclose);
    if (!g.ok()) return error(ErrorCode::ParseError, group, "the group is missing or unreadable");
    H5G_info_t info;
    if (H5Gget_info(g.get(), &info) < 0) return error(ErrorCode::ParseError, group, "the group is unreadable");
    std::vector<std::string> out;
    for (hsize_t k = 0; k < info.nlinks; ++k) {
        ssize_t n = H5Lget_name_by_idx(g.get(), ".", H5_INDEX_NAME, H5_ITER_INC, k, nullptr, 0, H5P_DEFAULT);
        if (n < 0 || n > 4096) return error(ErrorCode::ParseError, group, "a member name is unreadable");
        std::string name(static_cast<size_t>(n) + 1, '\0');
        if (H5Lget_name_by_idx(g.get(), ".", H5_INDEX_NAME, H5_ITER_INC, k, name.data(), name.size(), H5P_DEFAULT) < 0)
            return error(ErrorCode::ParseError, group, "a member name is unreadable");
        name.resize(static_cast<size_t>(n));
        out.push_back(std::move(name));
    }
    return out;
}

bool Hdf5File::hasAttribute(const std::string& object, const std::string& name) const {
    std::lock_guard lock(hdf5Lock());
    return H5Aexists_by_name(m_state->file, objectPath(object).c_str(), name.c_str(), H5P_DEFAULT) > 0;
}

Result<std::vector<std::string>> Hdf5File::stringListAttribute(const std::string& object, const std::string& name) const {
    std::lock_guard lock(hdf5Lock());
    const std::string where = objectPath(object) + "@" + name;
    if (H5Aexists_by_name(m_state->file, objectPath(object).c_str(), name.c_str(), H5P_DEFAULT) <= 0)
        return error(ErrorCode::ParseError, where, "the attribute is missing");
    Hid a(H5Aopen_by_name(m_state->file, objectPath(object).c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
    if (!a.ok()) return error(ErrorCode::ParseError, where, "the attribute is unreadable");
    Hid type(H5Aget_type(a.get()), H5Tclose);
    Hid space(H5Aget_space(a.get()), H5Sclose);
    if (!type.ok() || !space.ok()) return error(ErrorCode::ParseError, where, "the attribute is unreadable");
    const hssize_t n = H5Sget_simple_extent_npoints(space.get());
    if (n < 0 || n > (1 << 20)) return error(ErrorCode::ParseError, where, "the attribute has an invalid size");
    std::vector<std::string> out;
    if (n == 0) return out;  // h5py writes an empty list as an empty float array
    if (H5Tget_class(type.get()) != H5T_STRING) return error(ErrorCode::ParseError, where, "the attribute is not text");
    const htri_t variable = H5Tis_variable_str(type.get());
    if (variable < 0) return error(ErrorCode::ParseError, where, "the attribute is unreadable");
    Hid mem(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_cset(mem.get(), H5Tget_cset(type.get()));
    if (variable > 0) {
        H5Tset_size(mem.get(), H5T_VARIABLE);
        std::vector<char*> ptrs(static_cast<size_t>(n), nullptr);
        if (H5Aread(a.get(), mem.get(), ptrs.data()) < 0) return error(ErrorCode::ParseError, where, "the attribute is unreadable");
        for (char* p : ptrs) out.emplace_back(p ? p : "");
        H5Dvlen_reclaim(mem.get(), space.get(), H5P_DEFAULT, ptrs.data());
        return out;
    }
    const size_t size = H5Tget_size(type.get());
    if (size == 0 || size > (64u << 20) / static_cast<size_t>(n)) return error(ErrorCode::ParseError, where, "the attribute is too large");
    H5Tset_size(mem.get(), size);
    H5Tset_strpad(mem.get(), H5T_STR_NULLPAD);
    std::string buf(size * static_cast<size_t>(n), '\0');
    if (H5Aread(a.get(), mem.get(), buf.data()) < 0) return error(ErrorCode::ParseError, where, "the attribute is unreadable");
    for (hssize_t k = 0; k < n; ++k) {
        std::string s = buf.substr(static_cast<size_t>(k) * size, size);
        s.resize(std::strlen(s.c_str()));
        out.push_back(std::move(s));
    }
    return out;
}

Result<std::string> Hdf5File::stringAttribute(const std::string& object, const std::string& name) const {
    KILN_ASSIGN(std::vector<std::string> list, stringListAttribute(object, name));
    if (list.size() != 1) return error(ErrorCode::ParseError, objectPath(object) + "@" + name, "expected one text value");
    return std::move(list[0]);
}

Result<Hdf5Array> Hdf5File::readFloats(const std::string& path, int64_t maxElements) const {
    std::lock_guard lock(hdf5Lock());
    Hid d(H5Dopen2(m_state->file, objectPath(path).c_str(), H5P_DEFAULT), H5Dclose);
    if (!d.ok()) return error(ErrorCode::ParseError, path, "the dataset is missing or unreadable");
    Hid type(H5Dget_type(d.get()), H5Tclose);
    Hid space(H5Dget_space(d.get()), H5Sclose);
    if (!type.ok() || !space.ok()) return error(ErrorCode::ParseError, path, "the dataset is unreadable");
    const H5T_class_t cls = H5Tget_class(type.get());
    if (cls != H5T_FLOAT && cls != H5T_INTEGER) return error(ErrorCode::ParseError, path, "the dataset is not numeric");
    const int rank = H5Sget_simple_extent_ndims(space.get());
    if (rank < 0 || rank > 8) return error(ErrorCode::ParseError, path, "the dataset has an unsupported rank");
    std::vector<hsize_t> dims(static_cast<size_t>(rank));
    if (rank > 0 && H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr) < 0)
        return error(ErrorCode::ParseError, path, "the dataset is unreadable");
    Hdf5Array out;
    int64_t n = 1;
    for (hsize_t v : dims) {
        if (v > static_cast<hsize_t>(maxElements)) return error(ErrorCode::ParseError, path, "the dataset is too large");
        n *= static_cast<int64_t>(v);
        if (n > maxElements) return error(ErrorCode::ParseError, path, "the dataset is too large");
        out.dims.push_back(static_cast<int64_t>(v));
    }
    out.values.resize(static_cast<size_t>(n));
    if (n > 0 && H5Dread(d.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.values.data()) < 0)
        return error(ErrorCode::ParseError, path, "the dataset's values cannot be read (damaged or truncated file)");
    return out;
}

}  // namespace kiln::engine::io
