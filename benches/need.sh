# Sourced by the bench scripts: `need COMMAND PACKAGE` installs the Debian PACKAGE
# when COMMAND is missing (apt-get as root, else through sudo; one `apt-get update`
# retry for a fresh machine's empty package lists), and fails with a clear message
# when it cannot. The caller sets `who` (its name, for messages) before sourcing.
need() {
    command -v "$1" >/dev/null && return
    echo "${who:-bench}: installing $2 (for $1)" >&2
    local sudo=()
    if [[ "$(id -u)" -ne 0 ]]; then
        command -v sudo >/dev/null || { echo "${who:-bench}: $1 is missing (apt-get install $2)" >&2; exit 2; }
        sudo=(sudo)
    fi
    command -v apt-get >/dev/null || { echo "${who:-bench}: $1 is missing and there is no apt-get" >&2; exit 2; }
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get install -y -qq "$2" >/dev/null 2>&1 ||
        { "${sudo[@]}" apt-get update -qq >/dev/null && "${sudo[@]}" apt-get install -y -qq "$2" >/dev/null; } ||
        { echo "${who:-bench}: could not install $2 (for $1)" >&2; exit 2; }
}
