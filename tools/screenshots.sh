#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Screenshots of the studio for the documentation: docs/images/editor_en.png and
# editor_zh_CN.png, taken from a real X server (Xvfb, 1600x1000x24) with ImageMagick's `import`.
# Usage: tools/screenshots.sh [BUILD_DIR]   (default: build)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
kiln="$build/app/kiln/kiln"
project="$root/resources/examples/fashion_cnn.kiln"
out="$root/docs/images"
[[ -x "$kiln" ]] || { echo "screenshots: $kiln not found (build the kiln target first)" >&2; exit 1; }
command -v xvfb-run >/dev/null || { echo "screenshots: xvfb-run is missing (apt-get install xvfb xauth)" >&2; exit 1; }
command -v import >/dev/null || { echo "screenshots: ImageMagick's import is missing" >&2; exit 1; }
mkdir -p "$out"

# Fresh settings and recovery folders: no saved layout, no recovery notices from this machine.
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

shoot() {  # shoot LANG_CODE LOCALE OUTPUT
    local code="$1" locale="$2" png="$3"
    mkdir -p "$scratch/$code/config" "$scratch/$code/data"
    cat > "$scratch/$code/run.sh" <<INNER
#!/usr/bin/env bash
set -eu
"$kiln" --lang "$code" --size 1600x1000 "$project" &
pid=\$!
sleep "\${KILN_SHOT_WAIT:-6}"
import -window root "$png"
kill \$pid 2>/dev/null || true
wait \$pid 2>/dev/null || true
INNER
    chmod +x "$scratch/$code/run.sh"
    # LC_CTYPE: a UTF-8 locale that always exists; LANG names the language (may not be generated).
    env -u QT_QPA_PLATFORM -u LC_ALL LANG="$locale" LANGUAGE="${locale%%.*}" LC_CTYPE=C.UTF-8 \
        XDG_CONFIG_HOME="$scratch/$code/config" XDG_DATA_HOME="$scratch/$code/data" \
        xvfb-run -a -s "-screen 0 1600x1000x24" "$scratch/$code/run.sh"
    echo "screenshots: wrote $png"
}

shoot en en_US.UTF-8 "$out/editor_en.png"
shoot zh_CN zh_CN.UTF-8 "$out/editor_zh_CN.png"
