// SPDX-License-Identifier: Apache-2.0
// Where the runs and the run store of a project go: next to the project, or in the user's data
// folder when the project's folder cannot be written to (an installed example, a read-only share).
#pragma once

#include <string>

namespace kiln::engine::api {

// Kiln's folder in the user's data folder: $XDG_DATA_HOME/kiln, else ~/.local/share/kiln.
// "" when neither XDG_DATA_HOME (absolute) nor a home folder is known.
std::string userDataDir();

// True when files can be created in `folder`, or, if it does not exist yet, in its nearest
// existing parent. A folder without any write permission bit counts as read-only even for root,
// which the kernel would let write anywhere.
bool canWriteInto(const std::string& folder);

// The folder that holds runs/ and .kiln/ for the projects in `folder` ("" : the current folder):
// `folder` itself when it can be written to, else
// userDataDir()/projects/<folder's name>-<hash of its absolute path>, so two read-only folders
// never share a history and nothing is written next to the project.
std::string runsHome(const std::string& folder);

// The local time now in strftime's `format` ("%Y%m%d-%H%M%S"), for run and sweep names.
std::string localTimestamp(const char* format);

}  // namespace kiln::engine::api
