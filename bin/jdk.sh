# Sourced by bin/ringstore, bin/run-tests and bench/run.sh: sets RINGSTORE_JAVA_HOME to a JDK 22 or newer.
# Order: JAVA_HOME if it is one; else the newest JDK >= 22 found in the usual install locations.

ringstore_jdk_version() { # prints the feature version (e.g. 25) of the JDK at $1, or nothing
  local home="$1" v=""
  [ -x "$home/bin/java" ] && [ -x "$home/bin/javac" ] || return 0
  if [ -f "$home/release" ]; then
    v=$(sed -n 's/^JAVA_VERSION="\([0-9][0-9]*\).*/\1/p' "$home/release" | head -n 1)
  fi
  if [ -z "$v" ]; then
    v=$("$home/bin/java" -version 2>&1 | sed -n 's/.*version "\([0-9][0-9]*\).*/\1/p' | head -n 1)
  fi
  [ "$v" = "1" ] && v=8
  printf '%s' "$v"
}

ringstore_jdk_stamp() { # prints the lines of the JDK at $1's release file that an AOT cache is made for, or nothing
  [ -f "$1/release" ] || return 0
  grep -E '^(IMPLEMENTOR|JAVA_RUNTIME_VERSION|OS_ARCH)=' "$1/release" || true
}

ringstore_find_jdk() {
  local min=22 best="" best_v=0 v home
  if [ -n "${JAVA_HOME:-}" ]; then
    v=$(ringstore_jdk_version "$JAVA_HOME")
    if [ -n "$v" ] && [ "$v" -ge "$min" ]; then
      RINGSTORE_JAVA_HOME="$JAVA_HOME"
      return 0
    fi
    local what="not a JDK"
    [ -n "$v" ] && what="JDK $v"
    echo "ringstore: JAVA_HOME=$JAVA_HOME is $what; looking for a JDK $min or newer elsewhere" >&2
  fi
  local candidates=(/usr/lib/jvm/* /usr/local/lib/jvm/* /usr/java/* /opt/java/* /opt/jdk* /opt/*jdk*
                    "$HOME"/.sdkman/candidates/java/* "$HOME"/.jdks/* /Library/Java/JavaVirtualMachines/*/Contents/Home)
  if command -v javac >/dev/null 2>&1; then
    candidates+=("$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")")
  fi
  for home in "${candidates[@]}"; do
    [ -d "$home" ] || continue
    v=$(ringstore_jdk_version "$home")
    if [ -n "$v" ] && [ "$v" -ge "$min" ] && [ "$v" -gt "$best_v" ]; then
      best="$home"; best_v="$v"
    fi
  done
  if [ -z "$best" ]; then
    echo "ringstore: no JDK $min or newer found (needed for the Foreign Function & Memory API)." >&2
    echo "  checked: JAVA_HOME=${JAVA_HOME:-unset}, /usr/lib/jvm, /usr/local/lib/jvm, /usr/java, /opt, ~/.sdkman, ~/.jdks, javac on PATH" >&2
    echo "  install a JDK 22+ (for example Temurin 25) and set JAVA_HOME to it." >&2
    return 1
  fi
  RINGSTORE_JAVA_HOME="$best"
}
