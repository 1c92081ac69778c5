# Sourced by bin/ringstore, bin/run-tests and bench/run.sh: sets RINGSTORE_JAVA_HOME to a JDK 22 or newer.
# Order: JAVA_HOME if it is one; else the newest JDK >= 22 found in the usual install locations.
# The launcher sources this before every command, so the usual path runs bash builtins only: no
# subshell and no program (each costs a millisecond or two; a one-key lookup takes 0.09 s).

_ringstore_version_of() { # sets RINGSTORE_V to the feature version (e.g. 25) of the JDK at $1, or to nothing
  RINGSTORE_V=""
  local line
  [ -x "$1/bin/java" ] && [ -x "$1/bin/javac" ] || return 0
  if [ -f "$1/release" ] && [ -r "$1/release" ]; then
    while IFS= read -r line || [ -n "$line" ]; do
      if [[ $line =~ ^JAVA_VERSION=\"([0-9]+) ]]; then
        RINGSTORE_V=${BASH_REMATCH[1]}
        break
      fi
    done < "$1/release"
  fi
  if [ -z "$RINGSTORE_V" ]; then # no release file: ask the JDK itself
    RINGSTORE_V=$("$1/bin/java" -version 2>&1 | sed -n 's/.*version "\([0-9][0-9]*\).*/\1/p' | head -n 1)
  fi
  if [ "$RINGSTORE_V" = "1" ]; then RINGSTORE_V=8; fi
  return 0
}

ringstore_jdk_version() { # prints the feature version (e.g. 25) of the JDK at $1, or nothing
  _ringstore_version_of "$1"
  printf '%s' "$RINGSTORE_V"
}

_ringstore_stamp_of() { # sets RINGSTORE_STAMP to the lines of $1/release that an AOT cache is made for, one per line
  RINGSTORE_STAMP=""
  local line
  [ -f "$1/release" ] && [ -r "$1/release" ] || return 0
  while IFS= read -r line || [ -n "$line" ]; do
    case "$line" in
      IMPLEMENTOR=* | JAVA_RUNTIME_VERSION=* | OS_ARCH=*) RINGSTORE_STAMP+="$line"$'\n' ;;
    esac
  done < "$1/release"
  return 0
}

ringstore_jdk_stamp() { # prints the lines of the JDK at $1's release file that an AOT cache is made for, or nothing
  _ringstore_stamp_of "$1"
  printf '%s' "$RINGSTORE_STAMP"
}

ringstore_find_jdk() {
  local min=22 best="" best_v=0 home dir javac=""
  if [ -n "${JAVA_HOME:-}" ]; then
    _ringstore_version_of "$JAVA_HOME"
    if [ -n "$RINGSTORE_V" ] && [ "$RINGSTORE_V" -ge "$min" ]; then
      RINGSTORE_JAVA_HOME="$JAVA_HOME"
      return 0
    fi
    local what="not a JDK"
    [ -n "$RINGSTORE_V" ] && what="JDK $RINGSTORE_V"
    echo "ringstore: JAVA_HOME=$JAVA_HOME is $what; looking for a JDK $min or newer elsewhere" >&2
  fi
  local candidates=(/usr/lib/jvm/* /usr/local/lib/jvm/* /usr/java/* /opt/java/* /opt/jdk* /opt/*jdk*
                    "$HOME"/.sdkman/candidates/java/* "$HOME"/.jdks/* /Library/Java/JavaVirtualMachines/*/Contents/Home)
  local IFS_was="$IFS" path_dirs
  IFS=: read -r -a path_dirs <<< "$PATH"
  IFS="$IFS_was"
  for dir in "${path_dirs[@]}"; do # javac on PATH, as `command -v` finds it, its links resolved
    if [ -n "$dir" ] && [ -f "$dir/javac" ] && [ -x "$dir/javac" ]; then
      for home in "${candidates[@]}"; do # usually a link into one of those: no program needed to see it
        if [ "$dir/javac" -ef "$home/bin/javac" ]; then
          break 2
        fi
      done
      javac=$(readlink -f "$dir/javac")
      javac=${javac%/*}
      candidates+=("${javac%/*}")
      break
    fi
  done
  for home in "${candidates[@]}"; do
    [ -d "$home" ] || continue
    _ringstore_version_of "$home"
    if [ -n "$RINGSTORE_V" ] && [ "$RINGSTORE_V" -ge "$min" ] && [ "$RINGSTORE_V" -gt "$best_v" ]; then
      best="$home"; best_v="$RINGSTORE_V"
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
