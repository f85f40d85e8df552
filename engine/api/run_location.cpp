// SPDX-License-Identifier: Apache-2.0
// The run location: the project's folder when writable, else a per-folder place in the user's
// data folder.
#include "engine/api/run_location.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <system_error>

#include "engine/store/run_store.h"

namespace kiln::engine::api {

namespace fs = std::filesystem;

std::string userDataDir() {
    // The XDG base directory rules: a relative XDG_DATA_HOME is ignored.
    if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg == '/') {
        return (fs::path(xdg) / "kiln").string();
    }
    std::string home;
    if (const char* h = std::getenv("HOME"); h && *h) {
        home = h;
    } else if (const passwd* pw = ::getpwuid(::getuid()); pw && pw->pw_dir && *pw->pw_dir) {
        home = pw->pw_dir;
    }
    if (home.empty()) {
        return {};
    }
    return (fs::path(home) / ".local" / "share" / "kiln").string();
}

bool canWriteInto(const std::string& folder) {
    fs::path p = folder.empty() ? fs::path(".") : fs::path(folder);
    std::error_code ec;
    while (!fs::exists(p, ec)) {
        const fs::path parent = p.parent_path();
        if (parent.empty() || parent == p) {
            p = parent.empty() ? fs::path(".") : parent;
            break;
        }
        p = parent;
    }
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        return false;
    }
    return (st.st_mode & 0222) != 0 && ::access(p.c_str(), W_OK) == 0;
}

std::string runsHome(const std::string& folder) {
    if (canWriteInto(folder)) {
        return folder;
    }
    const std::string data = userDataDir();
    if (data.empty()) {
        // Nowhere else to go: the write next to the project then fails with an error naming it.
        return folder;
    }
    std::error_code ec;
    fs::path absolute = fs::absolute(folder.empty() ? fs::path(".") : fs::path(folder), ec);
    if (ec) {
        absolute = folder;
    }
    // One spelling per folder ("/a/b", "/a/b/", "/a/b/." alike), so that its runs and store meet.
    absolute = absolute.lexically_normal();
    if (!absolute.has_filename() && absolute.has_relative_path()) {
        absolute = absolute.parent_path();
    }
    std::string name = absolute.filename().string();
    if (name.empty()) {
        name = "root";
    }
    const std::string hash = store::contentHash(absolute.string()).substr(0, 8);
    return (fs::path(data) / "projects" / (name + "-" + hash)).string();
}

std::string localTimestamp(const char* format) {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    localtime_r(&now, &tm);
    char buffer[64];
    std::strftime(buffer, sizeof buffer, format, &tm);
    return buffer;
}

}  // namespace kiln::engine::api
